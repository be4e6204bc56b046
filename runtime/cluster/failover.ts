import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { RunStatus } from '../../store/index.ts';
import type { BusLogger } from '../bus/index.ts';
import type { ClusterBuckets } from './buckets.ts';
import { type ClusterInbox, InboxRecord } from './inbox.ts';
import { decodeEntry, type Versioned } from './kv.ts';
import { nodeAlive } from './leases.ts';
import { RunRecord, TERMINAL_STATUSES } from './run-records.ts';
import type { WorkItem } from './work-queue.ts';
import { systemClock, type Clock, type TimerHandle } from '../time/clock.ts';

/** What {@link Failover} needs from the node it serves. */
export interface FailoverDeps {
  readonly nodeId: string;
  readonly buckets: ClusterBuckets;
  readonly inbox: ClusterInbox;
  /** Approval deadlines are read, and their expiry checked, on this clock. */
  readonly clock: Clock;
  readonly logger: BusLogger;
  readonly enqueue: (runId: string, why: WorkItem['why'], dedupId: string) => Promise<void>;
  /** Whether the node stopped taking work (the checks do nothing then). */
  readonly workStopped: () => boolean;
  /** Whether this node's lease is lost (it takes no runs over then). */
  readonly leaseLost: () => boolean;
  /** Every run record seen (null: removed), after the failover index took it in. */
  readonly onRun?: (runId: string, rec: Versioned<RunRecord> | null) => void;
  /** Every Inbox record seen (null: removed), after the expiry index took it in. */
  readonly onInbox?: (id: string, rec: InboxRecord | null) => void;
}

const idOfKey = (key: string): string | null => {
  if (!key.startsWith('k')) return null;
  try {
    return Buffer.from(key.slice(1), 'base64url').toString('utf8');
  } catch {
    return null;
  }
};

/**
 * Watches the shared run records and Inbox and acts on what lapsed (DESIGN.md §9): a run whose
 * owner's lease ended is queued for failover, an approval past its deadline is expired in the
 * shared Inbox (and its run queued to resume).
 */
export class Failover {
  /** Non-terminal runs by id, as the run records say (kept by a watch). */
  readonly #index = new Map<
    string,
    { owner: string; status: RunStatus; revision: number; published: boolean }
  >();
  /** Pending approvals and their deadlines (kept by a watch). */
  readonly #pending = new Map<string, { expiresAt: number; runId: string | null }>();
  readonly #timers: Array<{ clock: Clock; timer: TimerHandle }> = [];
  readonly #watches: { stop(): void }[] = [];

  constructor(private readonly deps: FailoverDeps) {}

  /** How many approvals are pending, as the shared Inbox says. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Starts the watches, the failover check every `tickMs` and the expiry of approvals. */
  async start(tickMs: number): Promise<void> {
    this.#watches.push(await this.#watch(this.deps.buckets.runs.kv, (e) => this.#onRunEntry(e)));
    this.#watches.push(await this.#watch(this.deps.buckets.inbox.kv, (e) => this.#onInboxEntry(e)));
    // A lease lapses on the server's time (the bucket's max age): its check runs on real timers.
    // Approval deadlines are the runtime's time: their expiry runs on the runtime's clock.
    this.#timers.push(
      { clock: systemClock, timer: systemClock.setInterval(() => void this.#failoverCheck(), tickMs) },
      {
        clock: this.deps.clock,
        timer: this.deps.clock.setInterval(() => void this.#expireDue(), Math.min(1000, tickMs)),
      },
    );
  }

  stop(): void {
    for (const t of this.#timers.splice(0)) t.clock.clearInterval(t.timer);
    for (const w of this.#watches.splice(0)) w.stop();
  }

  async #watch(kv: KV, on: (e: KvWatchEntry) => void): Promise<{ stop(): void }> {
    const it = await kv.watch();
    void (async () => {
      for await (const e of it) {
        try {
          on(e);
        } catch (err) {
          this.deps.logger.warn(
            { err: (err as Error).message },
            'cluster: a watched entry was not understood',
          );
        }
      }
    })().catch((err: unknown) => {
      if (!this.deps.workStopped())
        this.deps.logger.error({ err: (err as Error).message }, 'cluster: a watch ended');
    });
    return { stop: () => it.stop() };
  }

  #onRunEntry(e: KvWatchEntry): void {
    const runId = idOfKey(e.key);
    if (runId === null) return;
    const rec = decodeEntry(e, RunRecord, `run record ${JSON.stringify(runId)}`);
    if (rec === null || TERMINAL_STATUSES.has(rec.value.status)) this.#index.delete(runId);
    else {
      this.#index.set(runId, {
        owner: rec.value.owner,
        status: rec.value.status,
        revision: rec.revision,
        published: rec.value.approval !== null,
      });
    }
    this.deps.onRun?.(runId, rec);
  }

  #onInboxEntry(e: KvWatchEntry): void {
    const id = idOfKey(e.key);
    if (id === null) return;
    const rec = decodeEntry(e, InboxRecord, `inbox record ${JSON.stringify(id)}`);
    if (rec === null || rec.value.status !== 'pending') this.#pending.delete(id);
    else this.#pending.set(id, { expiresAt: rec.value.approval.expiresAt, runId: rec.value.approval.runId });
    this.deps.onInbox?.(id, rec?.value ?? null);
  }

  async #failoverCheck(): Promise<void> {
    const { nodeId, buckets, logger } = this.deps;
    if (this.deps.workStopped() || this.deps.leaseLost()) return;
    const alive = new Map<string, boolean>();
    for (const [runId, r] of this.#index) {
      if (r.owner === nodeId) continue;
      // A parked run needs a node only if its request may not have reached the shared Inbox.
      if (r.status === 'waiting_for_approval' && r.published) continue;
      let ok = alive.get(r.owner);
      if (ok === undefined) {
        ok = await nodeAlive(buckets.nodes, r.owner).catch(() => true);
        alive.set(r.owner, ok);
      }
      if (!ok) {
        await this.deps
          .enqueue(runId, 'failover', `failover:${runId}:${r.revision}`)
          .catch((err: unknown) =>
            logger.warn({ runId, err: (err as Error).message }, 'cluster: failover not queued'),
          );
      }
    }
  }

  async #expireDue(): Promise<void> {
    if (this.deps.workStopped()) return;
    const now = this.deps.clock.now();
    for (const [id, p] of this.#pending) {
      if (p.expiresAt > now) continue;
      try {
        const after = await this.deps.inbox.expire(id, now);
        if (after?.status === 'expired' && after.decidedOn === this.deps.nodeId && p.runId !== null)
          await this.deps.enqueue(p.runId, 'decision', `decision:${id}`);
      } catch (err) {
        this.deps.logger.warn(
          { approvalId: id, err: (err as Error).message },
          'cluster: approval expiry failed',
        );
      }
    }
  }
}
