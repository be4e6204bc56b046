import type { ClusterNode } from '../cluster/index.ts';
import { ClusterDecisionError } from '../control/inbox.ts';

/**
 * Cluster mode: a decision written to this node's store alone would not be single use across
 * nodes (another node could decide the same request through the shared Inbox), so the
 * synchronous forms (`decide`, `approvals.approveWithGrant`) refuse; `approvals.decideAsync` decides through the
 * cluster. Does nothing on a single node.
 */
export function refuseLocalDecisionInCluster(
  cluster: ClusterNode | null,
  what: 'decide' | 'approveWithGrant',
): void {
  if (cluster === null) return;
  throw new ClusterDecisionError(
    what === 'decide'
      ? `this runtime is cluster node ${JSON.stringify(cluster.nodeId)}: decide with approvals.decideAsync, which decides once across the cluster`
      : `this runtime is cluster node ${JSON.stringify(cluster.nodeId)}: session and standing approvals are kept by one node, so only "once" decisions (approvals.decideAsync) are taken in cluster mode`,
  );
}
