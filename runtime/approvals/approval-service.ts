import { createActor, type Actor } from 'xstate';
import { approvalMachine } from '../../machines/approval/machine.ts';
import type { ApprovalDecision, ApprovalRecord, DecideResult, Store } from '../../store/index.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';

/** Where resolved approvals go: the run waiting on it, and whoever listens (bus, surfaces). */
export interface ApprovalSinks {
  deliver(approval: ApprovalRecord): void;
  /** `withdrawn`: its run ended while it waited (resolved in this node's store only, never shared). */
  resolved(approval: ApprovalRecord, withdrawn?: boolean): void;
  /**
   * Whether an approval this service does not track yet is being opened by a run live here:
   * its row is committed, its request not yet reported (it is reported once durable). A decision
   * made in that window waits for the report (see `track`).
   */
  opening?(approval: ApprovalRecord): boolean;
}

/**
 * Who may resolve approvals on this node. Absent on a single node (the default): the node's own
 * timers expire approvals and every resolution in its store reaches its run. Cluster mode
 * (runtime/cluster) expires and delivers through the shared Inbox and its work queue instead.
 */
export interface DecisionGate {
  /** Whether this node's own deadline timer may expire the approval. */
  mayExpire(approval: ApprovalRecord): boolean;
  /** Whether a resolution found in this node's store is delivered to its run here. */
  mayDeliver(approval: ApprovalRecord): boolean;
}

/**
 * The approvals of a running runtime. An approval opened while running is an approval actor
 * whose deadline is data (`expiresAt`) with its own timer. The pending approvals found at boot
 * (parked runs, possibly thousands) are kept dormant: only their ids and deadlines, in deadline
 * order, with one timer for the earliest; nothing more is loaded until a decision, an expiry or
 * a sync reaches one. Decisions are decided in the store first (single use, atomic across
 * processes); the actor, the dormant entry and the run only follow what the store says, so a
 * decision made by the CLI in another process is picked up by `sync`.
 */
export class ApprovalService {
  readonly #actors = new Map<string, Actor<typeof approvalMachine>>();
  readonly #timers = new Map<string, TimerHandle>();
  /** Pending approvals found at boot, by id: their deadline (no actor, no timer of their own). */
  readonly #dormant = new Map<string, number>();
  /** The dormant approvals this node expires, by deadline; `#dormantNext` is the first not yet passed. */
  #dormantOrder: Array<{ id: string; expiresAt: number }> = [];
  #dormantNext = 0;
  #dormantTimer: TimerHandle | undefined;
  /**
   * Decisions that reached an approval before its request was reported (a surface that read
   * the Inbox while the request was being made durable): delivered and reported resolved once
   * the request is (`track`), so no run goes on, and no one hears of the decision, before the
   * request itself.
   */
  readonly #early = new Map<string, ApprovalRecord>();

  constructor(
    private readonly store: Store,
    private readonly sinks: ApprovalSinks,
    /** Deadlines are read and their timers armed on this clock. */
    private readonly clock: Clock,
    private readonly gate?: DecisionGate,
  ) {}

  /** Tracks an approval (new, or found again at boot); resolves it at once when already decided. */
  track(approval: ApprovalRecord): void {
    const early = this.#early.get(approval.id);
    if (early !== undefined) {
      this.#early.delete(approval.id);
      this.sinks.resolved(early);
      if (this.gate === undefined || this.gate.mayDeliver(early)) this.sinks.deliver(early);
      return;
    }
    if (approval.status !== 'pending') {
      this.#finish(approval);
      return;
    }
    if (this.#actors.has(approval.id) || this.#dormant.has(approval.id)) return;
    const actor = createActor(approvalMachine, {
      input: { approvalId: approval.id, runId: approval.runId ?? '', expiresAt: approval.expiresAt },
    }).start();
    this.#actors.set(approval.id, actor);
    if (this.gate !== undefined && !this.gate.mayExpire(approval)) return;
    const due = Math.max(0, approval.expiresAt - this.clock.now());
    this.#timers.set(
      approval.id,
      this.clock.setTimeout(() => this.#expire(approval.id), due),
    );
  }

  /**
   * Re-arms every pending approval of the store (at boot; `pending` when the caller has just
   * listed them): each is kept dormant, its deadline on the one timer of the earliest.
   */
  rearm(pending: readonly ApprovalRecord[] = this.store.approvals.listPending()): void {
    for (const approval of pending) {
      if (approval.status !== 'pending') {
        this.#finish(approval);
        continue;
      }
      if (this.#actors.has(approval.id) || this.#dormant.has(approval.id)) continue;
      this.#dormant.set(approval.id, approval.expiresAt);
      if (this.gate === undefined || this.gate.mayExpire(approval))
        this.#dormantOrder.push({ id: approval.id, expiresAt: approval.expiresAt });
    }
    this.#dormantOrder.sort((a, b) => a.expiresAt - b.expiresAt);
    this.#dormantNext = 0;
    this.#armDormant();
  }

  /** Arms the one timer of the dormant approvals for the earliest deadline still pending here. */
  #armDormant(): void {
    if (this.#dormantTimer !== undefined) this.clock.clearTimeout(this.#dormantTimer);
    this.#dormantTimer = undefined;
    const order = this.#dormantOrder;
    while (this.#dormantNext < order.length && !this.#dormant.has(order[this.#dormantNext]?.id ?? ''))
      this.#dormantNext++;
    const first = order[this.#dormantNext];
    if (first === undefined) {
      this.#dormantOrder = [];
      this.#dormantNext = 0;
      return;
    }
    // Timers run on a monotonic clock and may fire a little before the wall-clock deadline:
    // one that finds its approval pending and not yet due arms again for the rest.
    const due = Math.max(1, first.expiresAt - this.clock.now() + 1);
    this.#dormantTimer = this.clock.setTimeout(() => this.#expireDormant(), due);
  }

  /** The dormant timer fired: expires what is due (audited), picks up what another process decided. */
  #expireDormant(): void {
    this.#dormantTimer = undefined;
    const now = this.clock.now();
    for (const approval of this.store.approvals.expireDue(now)) this.#finish(approval);
    const order = this.#dormantOrder;
    for (let i = this.#dormantNext; i < order.length && (order[i]?.expiresAt ?? Infinity) <= now; i++) {
      const id = order[i]?.id ?? '';
      if (this.#dormant.has(id)) this.sync(id);
    }
    this.#armDormant();
  }

  /**
   * A human decision from an authenticated surface (in-process API or sidecar). Single use:
   * a second, stale or expired decision changes nothing and says why. `reason` is the human's
   * optional reason, stored with the decision.
   */
  decide(id: string, decision: ApprovalDecision, user: string, reason?: string): DecideResult {
    const { result, stored, tracked } = this.#decideDeferred(id, decision, user, reason);
    // One fsync covers the decision and what its delivery wrote synchronously (the resumed
    // call's durable `started` row, whose executor waits for the same flush); the decision is
    // reported only after it.
    this.store.syncNow();
    if (tracked && stored !== null) this.sinks.resolved(stored);
    return result;
  }

  /**
   * `decide` for callers that can wait: the decision is reported (resolves) once it is on stable
   * storage, and decisions made at the same time share one fsync (group commit) instead of each
   * blocking the event loop for its own.
   */
  async decideAsync(
    id: string,
    decision: ApprovalDecision,
    user: string,
    reason?: string,
  ): Promise<DecideResult> {
    const { result, stored, tracked } = this.#decideDeferred(id, decision, user, reason);
    await this.store.sync();
    if (tracked && stored !== null) this.sinks.resolved(stored);
    return result;
  }

  /**
   * Decides in a deferred (group-commit) transaction and delivers the outcome to the run at
   * once: nothing the run does with it reaches the outside before the caller's fsync (a
   * durable call waits for it, see execute.ts). The caller syncs, then reports `resolved`.
   */
  #decideDeferred(
    id: string,
    decision: ApprovalDecision,
    user: string,
    reason: string | undefined,
  ): { result: DecideResult; stored: ApprovalRecord | null; tracked: boolean } {
    const result = this.store.transaction(
      () => this.store.approvals.decide(id, decision, user, this.clock.now(), reason),
      { durable: 'deferred' },
    );
    const stored = result.ok ? result.approval : this.store.approvals.get(id);
    if (stored === null || stored.status === 'pending') return { result, stored, tracked: false };
    const tracked = this.#settle(stored);
    if (!tracked && result.ok && this.sinks.opening?.(stored) === true) {
      // Its request is not reported yet: the decision waits for it (see `track`).
      this.#early.set(stored.id, stored);
      return { result, stored, tracked };
    }
    if (this.gate === undefined || this.gate.mayDeliver(stored)) this.sinks.deliver(stored);
    return { result, stored, tracked };
  }

  /** Picks up a decision another process wrote to the store (the CLI), if any. */
  sync(id: string): void {
    const approval = this.store.approvals.get(id);
    if (approval !== null && approval.status !== 'pending') this.#finish(approval);
  }

  /**
   * Syncs tracked approvals with the store (fallback when a notification was lost): one query for
   * the pending ids, then a read only for those that were decided meanwhile.
   */
  syncAll(): void {
    if (this.#actors.size === 0 && this.#dormant.size === 0) return;
    const pending = this.store.approvals.pendingIds();
    for (const id of [...this.#actors.keys(), ...this.#dormant.keys()]) if (!pending.has(id)) this.sync(id);
  }

  /** Stops every approval actor and timer (the records stay in the store). */
  stop(): void {
    for (const t of this.#timers.values()) this.clock.clearTimeout(t);
    for (const a of this.#actors.values()) a.stop();
    if (this.#dormantTimer !== undefined) this.clock.clearTimeout(this.#dormantTimer);
    this.#dormantTimer = undefined;
    this.#timers.clear();
    this.#actors.clear();
    this.#dormant.clear();
    this.#early.clear();
    this.#dormantOrder = [];
    this.#dormantNext = 0;
  }

  #expire(id: string): void {
    for (const approval of this.store.approvals.expireDue(this.clock.now())) this.#finish(approval);
    this.sync(id);
    // Timers run on a monotonic clock and may fire a little before the wall-clock deadline:
    // a request that is still pending and not yet due is re-armed, never forgotten.
    const still = this.store.approvals.get(id);
    if (still?.status === 'pending' && this.#actors.has(id)) {
      const due = Math.max(1, still.expiresAt - this.clock.now() + 1);
      this.#timers.set(
        id,
        this.clock.setTimeout(() => this.#expire(id), due),
      );
    }
  }

  /**
   * Withdraws the pending approvals of a run that ended without them (a cancel, a failure):
   * they leave the Inbox as `expired`, audited with `why`, and their actors stop. Nothing is
   * delivered: the run has ended and resumes on no decision.
   */
  withdrawForRun(runId: string, why: string): ApprovalRecord[] {
    for (const [id, early] of this.#early) if (early.runId === runId) this.#early.delete(id);
    const withdrawn = this.store.approvals.withdrawForRun(runId, why, this.clock.now());
    for (const approval of withdrawn) {
      this.#settle(approval);
      this.sinks.resolved(approval, true);
    }
    return withdrawn;
  }

  #finish(approval: ApprovalRecord): void {
    if (this.#settle(approval)) this.sinks.resolved(approval);
    if (this.gate === undefined || this.gate.mayDeliver(approval)) this.sinks.deliver(approval);
  }

  /** Ends the approval actor of a decided approval; true when it was tracked (report it resolved). */
  #settle(approval: ApprovalRecord): boolean {
    // A dormant one has no actor: it only leaves the set (the timer skips it when it comes up).
    if (this.#dormant.delete(approval.id)) return true;
    const actor = this.#actors.get(approval.id);
    if (actor !== undefined) {
      const now = this.clock.now();
      if (approval.status === 'expired')
        actor.send({ type: 'EXPIRE', now: Math.max(now, approval.expiresAt) });
      else if (approval.status === 'approved' || approval.status === 'denied') {
        actor.send({
          type: 'DECIDE',
          decision: approval.status,
          user: approval.decidedBy ?? 'unknown',
          now: approval.decidedAt ?? now,
        });
      }
      actor.stop();
      this.#actors.delete(approval.id);
      const t = this.#timers.get(approval.id);
      if (t) this.clock.clearTimeout(t);
      this.#timers.delete(approval.id);
      return true;
    }
    return false;
  }
}
