import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BusLogger } from '../bus/index.ts';
import { ClusterError, ClusterErrorCode } from './errors.ts';
import { createIfAbsent, kvKey, readVersioned, updateAt, type Bucket } from './kv.ts';
import { answerHolderProbes, probeHolder } from './node-probe.ts';

/** A node's lease: present while the node refreshes it; the bucket's max age removes it after death. */
export const LeaseRecord = z.strictObject({
  v: z.literal(1),
  node: z.string().min(1),
  /** Random per process: a restarted node with the same id is a new incarnation. */
  incarnation: z.string().min(1),
  startedAt: z.number().int().nonnegative(),
  refreshedAt: z.number().int().nonnegative(),
});
export type LeaseRecord = z.infer<typeof LeaseRecord>;

/**
 * This node's lease in the `nodes` bucket (whose max age is the lease TTL; nats-server 2.9 has no
 * per-key TTL). Acquired with `create` — waiting out a lease left by a dead process of the same id —
 * and refreshed by compare-and-swap every third of the TTL. A lease that lapsed (no refresh got
 * through within the TTL: a lost quorum, a pause) is taken again by the same incarnation when no
 * one else holds the id; only another process holding the id means the lease is lost: `onLost`
 * is called and the node stops taking work.
 */
export class NodeLease {
  readonly incarnation = randomUUID();
  #revision = 0;
  #timer: NodeJS.Timeout | null = null;
  #lost = false;
  #refreshing = false;
  #startedAt = 0;
  #answering: { unsubscribe(): void } | null = null;

  constructor(
    private readonly kv: Bucket,
    readonly nodeId: string,
    private readonly ttlMs: number,
    private readonly clock: () => number,
    private readonly logger: BusLogger,
    private readonly onLost: () => void,
  ) {}

  get lost(): boolean {
    return this.#lost;
  }

  /**
   * Takes the lease by `create`. When the id is held, the holder is asked directly (it answers
   * while it holds its lease): a live holder fails this start at once with `cluster_node_id_in_use`.
   * A lease no process answers for (left by one that died) is waited out, up to two TTLs.
   */
  async acquire(): Promise<void> {
    const deadline = this.clock() + 2 * this.ttlMs + 1000;
    const now = this.clock();
    this.#startedAt = now;
    const record: LeaseRecord = {
      v: 1,
      node: this.nodeId,
      incarnation: this.incarnation,
      startedAt: now,
      refreshedAt: now,
    };
    for (;;) {
      const rev = await createIfAbsent(this.kv, this.nodeId, record);
      if (rev !== null) {
        this.#revision = rev;
        break;
      }
      const holder = await probeHolder(this.kv.nc, this.nodeId, this.incarnation, 500);
      if (holder !== null || this.clock() >= deadline) {
        throw new ClusterError(
          ClusterErrorCode.NodeIdInUse,
          `node.id ${JSON.stringify(this.nodeId)} is held by another live runtime (it answers as the holder of its lease); give each node its own id`,
        );
      }
      await new Promise((r) => setTimeout(r, Math.max(50, Math.min(250, this.ttlMs / 4))));
    }
    this.#answering = answerHolderProbes(this.kv.nc, this.nodeId, this.incarnation);
    this.#timer = setInterval(() => void this.#refresh(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.#timer.unref();
  }

  async #refresh(): Promise<void> {
    // One refresh at a time: while the bucket has no leader a request waits for its timeout,
    // and ticks queued behind it would only repeat it.
    if (this.#lost || this.#refreshing) return;
    this.#refreshing = true;
    try {
      await this.#refreshOnce();
    } catch (err) {
      // No quorum right now: try again at the next tick (the lease lapses if this lasts a TTL,
      // and is taken again once the bucket answers).
      this.logger.warn({ nodeId: this.nodeId, err: (err as Error).message }, 'cluster: lease refresh failed');
    } finally {
      this.#refreshing = false;
    }
  }

  async #refreshOnce(): Promise<void> {
    const record: LeaseRecord = {
      v: 1,
      node: this.nodeId,
      incarnation: this.incarnation,
      startedAt: this.#startedAt,
      refreshedAt: this.clock(),
    };
    const rev = await updateAt(this.kv, this.nodeId, record, this.#revision);
    if (rev !== null) {
      this.#revision = rev;
      return;
    }
    const now = await readVersioned(this.kv, this.nodeId, LeaseRecord, 'lease');
    if (now !== null && now.value.incarnation === this.incarnation) {
      this.#revision = now.revision;
      return;
    }
    if (now === null) {
      // The lease lapsed: not refreshed within the TTL (the server leading the bucket died and
      // its successor took longer than the TTL to be elected, or this process paused), and the
      // bucket's max age removed it. Nobody holds the id: take it again and keep working. A run
      // another node took over meanwhile is fenced by its record (the owner changed), not by this lease.
      const again = await createIfAbsent(this.kv, this.nodeId, record);
      if (again !== null) {
        this.#revision = again;
        this.logger.warn({ nodeId: this.nodeId }, 'cluster: this node lease lapsed and was taken again');
        return;
      }
      const after = await readVersioned(this.kv, this.nodeId, LeaseRecord, 'lease');
      if (after === null) return; // Still absent (a write in flight): the next tick tries again.
      if (after.value.incarnation === this.incarnation) {
        this.#revision = after.revision;
        return;
      }
    }
    // Another process holds this node id: stop working as this node.
    this.#lost = true;
    this.#answering?.unsubscribe();
    this.logger.error(
      { nodeId: this.nodeId },
      'cluster: another runtime took this node id; this node takes no more work',
    );
    this.onLost();
  }

  /** Stops refreshing and removes the lease (a clean stop: other nodes may take this node's runs at once). */
  async release(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#answering?.unsubscribe();
    this.#answering = null;
    if (this.#lost) return;
    await this.kv.kv.delete(kvKey(this.nodeId), { previousSeq: this.#revision }).catch(() => {});
  }
}

/** Whether a node holds a live lease now. */
export async function nodeAlive(kv: Bucket, nodeId: string): Promise<boolean> {
  return (await readVersioned(kv, nodeId, LeaseRecord, 'lease')) !== null;
}
