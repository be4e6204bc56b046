// The three-server JetStream cluster of the cluster tests: runtime/cluster/local-cluster.ts (the
// same launcher as `snotra dev-cluster`) in a temp dir, named `snotra-test`.
import { startLocalCluster, type NatsCluster } from '../../runtime/cluster/local-cluster.ts';

export type { ClusterServer, NatsCluster } from '../../runtime/cluster/local-cluster.ts';

export function startNatsCluster(options: { timeoutMs?: number } = {}): Promise<NatsCluster> {
  return startLocalCluster({ ...options, clusterName: 'snotra-test' });
}
