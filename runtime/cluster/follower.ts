import type { ApprovalRecord, Store } from '../../store/index.ts';
import type { BusLogger } from '../bus/index.ts';
import { storedContext, storedOutcome } from '../runs/stored-run.ts';
import { approvalOf, type InboxRecord } from './inbox.ts';
import type { Versioned } from './kv.ts';
import { type RunRecord, TERMINAL_STATUSES } from './run-records.ts';
import type { ClusterRuntimeView } from './runtime-view.ts';

/** A pending approval of the cluster's Inbox, with the node that parked it (null: not recorded). */
export type ClusterApproval = ApprovalRecord & { readonly node: string | null };

/** What {@link ClusterFollower} needs from the node it serves. */
export interface FollowerDeps {
  readonly nodeId: string;
  readonly store: Store;
  readonly logger: BusLogger;
  /** The runtime, once attached. */
  readonly rt: () => ClusterRuntimeView | null;
}

/**
 * This node's view follows the shared record (DESIGN.md §9, docs/cluster.md): what another node
 * decided, expired, completed or took over reaches this node's store, its approval service and
 * its feed, so its Inbox, runs list and surfaces agree with the cluster. It also keeps the
 * cluster's pending approvals (the cluster-wide Inbox every node lists).
 *
 * A decision learned here is audited in this node's chain as that decision (who, and through
 * which node); it is never delivered to a run here (only a resume item does that) and never
 * carried back to the shared Inbox.
 */
export class ClusterFollower {
  readonly #pending = new Map<string, ClusterApproval>();
  /** Approvals being resolved here from the shared Inbox (the gate delivers and carries none of them). */
  readonly #learning = new Set<string>();

  constructor(private readonly deps: FollowerDeps) {}

  /** Whether an approval is being resolved from the shared Inbox right now. */
  isLearning(approvalId: string): boolean {
    return this.#learning.has(approvalId);
  }

  readonly #listeners = new Set<() => void>();

  /**
   * The cluster's pending approvals, oldest first, with the node that parked each (this node's
   * own requests not yet published included, as this node's).
   */
  pending(): ClusterApproval[] {
    const shared = [...this.#pending.values()];
    const local = this.deps.store.approvals
      .listPending({})
      .filter((a) => !this.#pending.has(a.id))
      .map((a): ClusterApproval => ({ ...a, node: this.deps.nodeId }));
    return [...shared, ...local].sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Calls `listener` after the cluster's pending approvals changed; returns its removal. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'cluster: an Inbox listener failed');
      }
    }
  }

  /** An Inbox record changed (or was removed: null). */
  inbox(id: string, rec: InboxRecord | null): void {
    if (rec !== null && rec.status === 'pending') {
      this.#pending.set(id, { ...approvalOf(rec), node: rec.openedOn ?? null });
      this.#changed();
      return;
    }
    const listed = this.#pending.delete(id);
    const learned = rec !== null && this.#learnDecision(id, rec);
    // This node's own requests are listed from its store: a decision learned there changes the list too.
    if (listed || learned) this.#changed();
  }

  /** A run record changed: a run this node knows, owned elsewhere now, follows its record. */
  run(runId: string, rec: Versioned<RunRecord> | null): void {
    const rt = this.deps.rt();
    if (rec === null || rt === null || rec.value.owner === this.deps.nodeId) return;
    if (rt.runs.isLive(runId)) return;
    const { store } = this.deps;
    const local = store.snapshots.get(runId);
    if (local === null) return;
    const envelope = rec.value.envelope as { updatedAt?: unknown; status?: unknown } | null;
    // Only forward: a record older than the local copy (a late watch entry from before this node
    // took the run and parked it again) never overwrites it.
    if (typeof envelope?.updatedAt !== 'number' || envelope.updatedAt < local.updatedAt) return;
    if (local.status === rec.value.status && envelope.updatedAt === local.updatedAt) return;
    if (TERMINAL_STATUSES.has(local.status)) return;
    try {
      const imported = store.snapshots.importEnvelope(
        rec.value.envelope,
        `cluster run record ${JSON.stringify(runId)}`,
      );
      this.deps.logger.debug(
        { runId, owner: rec.value.owner, status: imported.status },
        'cluster: run followed',
      );
      if (!TERMINAL_STATUSES.has(imported.status)) return;
      const ctx = storedContext(imported);
      const outcome = storedOutcome(imported);
      if (ctx !== null && outcome !== null) rt.feed.ended(ctx, outcome);
    } catch (err) {
      this.deps.logger.warn({ runId, err: (err as Error).message }, 'cluster: a run record was not followed');
    }
  }

  /** Brings a decision (or expiry) of the shared Inbox into this node's store, audited as what it was. */
  #learnDecision(id: string, rec: InboxRecord): boolean {
    const { store } = this.deps;
    const local = store.approvals.get(id);
    if (local === null || local.status !== 'pending') return false;
    try {
      if (rec.status === 'expired') store.approvals.expireDue(rec.approval.expiresAt);
      else if (rec.status === 'approved' || rec.status === 'denied') {
        store.approvals.decide(
          id,
          rec.status,
          rec.decidedBy ?? 'unknown',
          Math.min(rec.decidedAt ?? rec.approval.createdAt, rec.approval.expiresAt - 1),
          rec.decisionReason ?? undefined,
          rec.decidedOn ?? undefined,
        );
      }
    } catch (err) {
      this.deps.logger.warn(
        { approvalId: id, err: (err as Error).message },
        'cluster: a decision was not followed',
      );
      return false;
    }
    this.deps.logger.info(
      { approvalId: id, decision: rec.status, by: rec.decidedBy, through: rec.decidedOn },
      'cluster: decision learned from the shared Inbox',
    );
    this.#learning.add(id);
    try {
      this.deps.rt()?.approvals.sync(id);
    } finally {
      this.#learning.delete(id);
    }
    return true;
  }
}
