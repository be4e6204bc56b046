import type { NatsConnection } from '@nats-io/transport-node';
import type { Store } from '../../store/index.ts';
import type { BusLogger } from '../bus/index.ts';
import { ConfigError } from '../config/errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import { ClusterNode } from './cluster-node.ts';
import type { Clock } from '../time/clock.ts';

export { ClusterNode, type ClusterNodeOptions, type ClusterRuntimeView } from './cluster-node.ts';
export { ClusterError, ClusterErrorCode } from './errors.ts';
export { checkClusterServer, MIN_SERVER_VERSION, type ServerFacts } from './feature-check.ts';
export { BUCKETS } from './buckets.ts';
export { WORK_STREAM } from './work-queue.ts';

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
  return ClusterNode.start({
    nc,
    nodeId: node.id,
    store,
    clock,
    logger,
    ...(node.leaseTtlMs === undefined ? {} : { leaseTtlMs: node.leaseTtlMs }),
    ...(node.resumeAckWaitMs === undefined ? {} : { ackWaitMs: node.resumeAckWaitMs }),
  });
}
