// The three-server JetStream cluster of the cluster tests: runtime/cluster/local-cluster.ts (the
// same launcher as `snotra dev-cluster`) in a temp dir, named `snotra-test`.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startLocalCluster, type NatsCluster } from '../../runtime/cluster/local-cluster.ts';

export type { ClusterServer, NatsCluster } from '../../runtime/cluster/local-cluster.ts';

export function startNatsCluster(options: { timeoutMs?: number } = {}): Promise<NatsCluster> {
  return startLocalCluster({ ...options, clusterName: 'snotra-test' });
}

/**
 * Moves the leader of `stream` (or of its `consumer`) off server `avoid` (leader step-downs until
 * another server leads it) and returns the index of the server that leads it then: the server
 * whose death costs it its leader, while clients connected to `avoid` keep their connection.
 */
export async function leaderAwayFrom(
  cluster: NatsCluster,
  stream: string,
  avoid: number,
  options: { consumer?: string; timeoutMs?: number } = {},
): Promise<number> {
  const nc = await connect({ servers: [...cluster.urls], token: cluster.token(), timeout: 5000 });
  const what = options.consumer === undefined ? stream : `${stream} consumer ${options.consumer}`;
  const stepdown =
    options.consumer === undefined
      ? `$JS.API.STREAM.LEADER.STEPDOWN.${stream}`
      : `$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${options.consumer}`;
  try {
    const jsm = await jetstreamManager(nc);
    const leaderNow = async (): Promise<string> => {
      const info =
        options.consumer === undefined
          ? await jsm.streams.info(stream)
          : await jsm.consumers.info(stream, options.consumer);
      return info.cluster?.leader ?? '';
    };
    const end = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const leader = await leaderNow().catch(() => '');
      const index = cluster.servers.findIndex((s) => s.name === leader);
      if (index >= 0 && index !== avoid) return index;
      if (Date.now() > end)
        throw new Error(`the leader of ${what} stayed on server ${avoid} or unknown (${leader})`);
      if (index === avoid) await nc.request(stepdown, '', { timeout: 5000 }).catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await nc.close().catch(() => {});
  }
}
