import { Kvm } from '@nats-io/kv';
import type { Bucket } from './kv.ts';
import { retryDeadline, withRetry } from './retry.ts';
import type { NatsConnection } from '@nats-io/transport-node';

/** The KV buckets of cluster mode (each a replicated JetStream stream). */
export const BUCKETS = {
  /** Run records: owner node, status and the run's snapshot envelope, CAS on revision. */
  runs: 'snotra_runs',
  /** The shared Inbox: one record per approval; a decision is a CAS from `pending`. */
  inbox: 'snotra_inbox',
  /** Exactly-once claims of calls: `create` of the idempotency key before the call, the outcome after. */
  claims: 'snotra_claims',
  /** Node leases: one key per live node, refreshed by CAS; the bucket's max age ends a dead node's lease. */
  nodes: 'snotra_nodes',
} as const;

/** The opened buckets. */
export interface ClusterBuckets {
  readonly runs: Bucket;
  readonly inbox: Bucket;
  readonly claims: Bucket;
  readonly nodes: Bucket;
}

/** How the buckets are created (every node must use the same values, or the create fails naming the bucket). */
export interface BucketOptions {
  readonly replicas: number;
  /** The lease bucket's max age: a node whose lease was not refreshed for this long counts as dead. */
  readonly leaseTtlMs: number;
}

/**
 * Creates (or binds to) the buckets with file storage and `replicas` copies. History 1: only the
 * latest value of a key is kept, which is all a compare-and-swap needs. A JetStream API timeout
 * (a cluster electing leaders, or under load) is retried for up to 30 s.
 */
export async function openBuckets(nc: NatsConnection, options: BucketOptions): Promise<ClusterBuckets> {
  const kvm = new Kvm(nc);
  const open = async (name: string, extra: { ttl?: number } = {}): Promise<Bucket> => {
    try {
      // No direct get: a direct get may be answered by a replica that has not applied the
      // latest write yet (a just-opened approval read back as not found on another node); reads
      // through the stream leader see every acknowledged write.
      const kv = await withRetry(
        () =>
          kvm.create(name, {
            replicas: options.replicas,
            history: 1,
            allow_direct: false,
            ...extra,
          }),
        retryDeadline(30_000),
      );
      return { kv, name, nc };
    } catch (err) {
      throw new Error(`cannot create or bind the KV bucket ${name}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  return {
    runs: await open(BUCKETS.runs),
    inbox: await open(BUCKETS.inbox),
    claims: await open(BUCKETS.claims),
    nodes: await open(BUCKETS.nodes, { ttl: options.leaseTtlMs }),
  };
}
