/** The runtime's pid file in the state dir (mode 0600), read by the CLI's ancestry check. */
export const RUNTIME_FILE = 'runtime.json';

/**
 * Present in the state dir of a cluster node (`node.id` in its config), with the node's id:
 * written at every cluster-mode boot, removed by a boot on a single node. The CLI reads it to
 * refuse a decision written to this node's local store, which would not be single use across
 * the cluster (decisions there go through the shared Inbox: the sidecar or the runtime API).
 */
export const CLUSTER_FILE = 'cluster-node.json';
