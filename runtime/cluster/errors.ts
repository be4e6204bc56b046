/** Stable codes of the cluster layer's errors (callers branch on `code`). */
export const ClusterErrorCode = {
  /** The NATS server is older than the oldest version cluster mode is built on (2.9.0). */
  UnsupportedServer: 'cluster_unsupported_server',
  /** The server (or the account) has no JetStream. */
  NoJetStream: 'cluster_no_jetstream',
  /** The server is not part of a cluster (replicated buckets need three servers). */
  NotClustered: 'cluster_not_clustered',
  /** Cluster mode is configured inconsistently (e.g. `node.id` without `bus.url`). */
  InvalidConfig: 'cluster_invalid_config',
  /** Another node holds this node id's lease (two live nodes with one id). */
  NodeIdInUse: 'cluster_node_id_in_use',
  /** A stored cluster record failed validation. */
  InvalidRecord: 'cluster_invalid_record',
} as const;
export type ClusterErrorCode = (typeof ClusterErrorCode)[keyof typeof ClusterErrorCode];

/** The one error class of runtime/cluster; messages never hold a credential or a payload. */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  constructor(
    readonly code: ClusterErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
