import type { NatsConnection } from '@nats-io/transport-node';
import type { Store } from '../../store/index.ts';
import type { BusLogger } from '../bus/index.ts';
import { ConfigError } from '../config/errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import { ClusterNode } from './cluster-node.ts';
import { writeClusterInbox } from './inbox-file.ts';
import type { Clock } from '../time/clock.ts';

export { ClusterNode, type ClusterNodeOptions, type ClusterRuntimeView } from './cluster-node.ts';
export { ClusterError, ClusterErrorCode } from './errors.ts';
export { checkClusterServer, MIN_SERVER_VERSION, type ServerFacts } from './feature-check.ts';
export { BUCKETS } from './buckets.ts';
export { WORK_STREAM } from './work-queue.ts';
export type { ClusterApproval } from './follower.ts';
export { CLUSTER_INBOX_FILE, readClusterInbox, removeClusterInbox } from './inbox-file.ts';

/**
 * Cluster mode from config: null without `node.id` (the embedded single-node default, unchanged);
 * with it, `bus.url` is required (a ConfigError naming both keys otherwise) and the node is started.
 */
export async function startClusterFromConfig(
  loaded: LoadedConfig,
  nc: NatsConnection,
  store: Store,
  clock: Clock,
  logger: BusLogger,
): Promise<ClusterNode | null> {
  const node = loaded.config.node;
  if (node === undefined) return null;
  if (loaded.config.bus.url === undefined) {
    throw new ConfigError(loaded.file ?? '(config)', [
      'node.id: cluster mode needs bus.url (the NATS cluster every node connects to); the embedded server is a single node',
    ]);
  }
  const cluster = await ClusterNode.start({
    nc,
    nodeId: node.id,
    store,
    clock,
    logger,
    ...(node.leaseTtlMs === undefined ? {} : { leaseTtlMs: node.leaseTtlMs }),
    ...(node.resumeAckWaitMs === undefined ? {} : { ackWaitMs: node.resumeAckWaitMs }),
  });
  keepInboxFile(cluster, loaded.config.stateDir, clock, logger);
  return cluster;
}

/** Keeps the state dir's copy of the cluster's Inbox (for `snotra inbox list`): once per turn of changes. */
function keepInboxFile(cluster: ClusterNode, stateDir: string, clock: Clock, logger: BusLogger): void {
  let queued = false;
  const write = (): void => {
    queued = false;
    try {
      writeClusterInbox(stateDir, cluster.nodeId, clock.now(), cluster.pendingApprovals());
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'cluster: the Inbox file was not written');
    }
  };
  write();
  cluster.onInboxChange(() => {
    if (queued) return;
    queued = true;
    setImmediate(write);
  });
}
