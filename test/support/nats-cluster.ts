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
 * Moves the leader of `stream` off server `avoid` (leader step-downs until another server leads
 * it) and returns the index of the server that leads it then: the server whose death costs the
 * stream its leader, while clients connected to `avoid` keep their connection.
 */
export async function leaderAwayFrom(
  cluster: NatsCluster,
  stream: string,
  avoid: number,
  timeoutMs = 60_000,
): Promise<number> {
  const nc = await connect({ servers: [...cluster.urls], token: cluster.token(), timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    const end = Date.now() + timeoutMs;
    for (;;) {
      const leader = await jsm.streams
        .info(stream)
        .then((i) => i.cluster?.leader ?? '')
        .catch(() => '');
      const index = cluster.servers.findIndex((s) => s.name === leader);
      if (index >= 0 && index !== avoid) return index;
      if (Date.now() > end)
        throw new Error(`the leader of ${stream} stayed on server ${avoid} or unknown (${leader})`);
      if (index === avoid)
        await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, '', { timeout: 5000 }).catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await nc.close().catch(() => {});
  }
}
