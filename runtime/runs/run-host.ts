import { createActor, fromPromise, type Actor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import { storedContext } from './stored-run.ts';
import type { ApprovalRecord, RunStatus, Store } from '../../store/index.ts';
import type { provideRunMachine, SettledEffect } from '../../actors/run/effects.ts';
import type { RunContext, RunInput, RunOutcome } from '../../machines/run/types.ts';
import { RESUME_CONCURRENCY, RESUME_SLOT_MS } from './boot-resume.ts';
import { observedMachine } from './observed-machine.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';

type RunMachine = ReturnType<typeof provideRunMachine>;
type RunActor = Actor<RunMachine>;
type RunSnapshot = SnapshotFrom<RunMachine>;

/**
 * Told of each state a run actor takes, synchronously: its first one (created or restored) with
 * `xstate.init`, then each one a transition of the run's root reached, with that event.
 */
export type RunObserver = (runId: string, snapshot: RunSnapshot, event: { readonly type: string }) => void;

const INIT_EVENT = { type: 'xstate.init' } as const;

/** What the host reports about runs. */
export interface RunHostEvents {
  /** A new run (top-level or sub-agent) is about to take its first step. */
  onStarted?(input: RunInput): void;
  /** A persisted run was brought back from its snapshot (after a restart, or for a decision). */
  onRestored?(input: RunInput): void;
  onStatus(runId: string, status: RunStatus, context: RunContext): void;
  onEnded(runId: string, outcome: RunOutcome, context: RunContext): void;
}

/** Maps a run snapshot to the run lifecycle status stored beside it. */
export function statusOf(snapshot: RunSnapshot): RunStatus {
  const v = snapshot.value;
  if (typeof v === 'string') {
    if (
      v === 'waiting_for_approval' ||
      v === 'resuming' ||
      v === 'completed' ||
      v === 'failed' ||
      v === 'denied'
    )
      return v;
  }
  return 'running';
}

const TERMINAL: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'denied']);

/**
 * Hosts run actors: starts them, persists every snapshot change (so a crash resumes from the
 * last step), parks unattended runs waiting for a human (snapshot persisted, actor stopped),
 * and brings a parked run back to deliver a decision. A run is live in at most one actor.
 */
export class RunHost {
  readonly #live = new Map<string, RunActor>();
  /** Live runs that were restored from a snapshot in this process (their steps may replay). */
  readonly #restored = new Set<string>();
  /** Approvals delivered to each live or parked run (dropped when the run ends). */
  readonly #delivered = new Map<string, Set<string>>();
  /** Runs whose coalesced snapshot write is due at the end of this event-loop turn (see #schedulePersist). */
  readonly #scheduled = new Map<string, RunActor>();
  /**
   * Those of them whose write must also join the next transaction the store opens, if it comes
   * first: a first state, a model answer (what the run's next commits depend on), each as it was
   * when it became due (see `#capture`).
   */
  readonly #joins = new Map<string, Captured>();
  #flushScheduled = false;
  /** Runs written inside the store's open transaction: stored once it commits, due again if anything in it rolls back. */
  readonly #inTx = new Map<string, Captured>();
  /** Started runs whose first state is not committed yet, with who waits for it (see `stored`). */
  readonly #unstored = new Map<string, Array<(stored: boolean) => void>>();
  /** Set while due writes join a transaction (a write's own savepoint asks for them again). */
  #joining = false;
  readonly #deadlines = new Map<string, TimerHandle>();
  /** Who waits for a live run to settle (see `whenSettled`). */
  readonly #settled = new Map<string, Array<() => void>>();
  /** Decisions for parked runs waiting for a resume slot, oldest first (ids queued, to queue each once). */
  readonly #queued: ApprovalRecord[] = [];
  readonly #queuedIds = new Set<string>();
  /** Parked runs brought back for a decision that have not settled yet (see `whenSettled`). */
  #resuming = 0;
  #machine: RunMachine | null = null;
  #stopping = false;

  constructor(
    private readonly store: Store,
    private readonly events: RunHostEvents,
    /** Wall-time deadlines and resume slots are read and armed on this clock. */
    private readonly clock: Clock,
    /**
     * Receives XState's inspection events of every run actor (state changes, events, effects,
     * microsteps, actions, of the run and of its children): complete, and costly on the hot path.
     */
    private readonly inspect?: (runId: string, event: InspectionEvent) => void,
    /** Receives every state a run actor takes, with its cause (see `RunObserver`): cheap. */
    private readonly observe?: RunObserver,
  ) {
    store.joinEachCommit({
      write: () => this.#writeDue(),
      undone: () => this.#undone(),
      ended: (committed) => this.#ended(committed),
    });
  }

  /**
   * Sets the provided run machine (done once, after the effects are wired to this host). The
   * host provides `recordStep` itself: the run's snapshot, holding the model's answer, is due
   * from then on, so it commits with (or before) whatever the store commits next — the audit of a
   * proposed call, its approval, its ledger row — and at the end of the turn at the latest.
   */
  setMachine(machine: RunMachine): void {
    const provided = machine.provide({
      actors: {
        recordStep: fromPromise<void, { context: RunContext }>(async ({ input }) => {
          const runId = input.context.runId;
          const actor = this.#live.get(runId);
          if (actor === undefined) throw new Error(`run ${runId} is not live`);
          this.#schedulePersist(runId, actor, true);
        }),
      },
    }) as RunMachine;
    const observe = this.observe;
    this.#machine =
      observe === undefined
        ? provided
        : observedMachine(provided, (s, e) => observe(s.context.runId, s, e as { readonly type: string }));
  }

  #persistNow(runId: string): void {
    const actor = this.#live.get(runId);
    if (actor === undefined) throw new Error(`run ${runId} is not live`);
    this.#persist(runId, actor.getSnapshot(), actor);
  }

  /**
   * Writes a live run's current state now, inside the caller's transaction when one is open: the
   * run's wait for a human commits with the approval it waits on, so a crash never leaves an
   * approval whose run is stored before it asked (the decision would reach a run not waiting for
   * it). A run that is not live is not written. With `settled`, written as it will be once that
   * effect has returned (see `withSettled`).
   */
  persistCurrent(runId: string, settled?: SettledEffect): void {
    const actor = this.#live.get(runId);
    if (actor === undefined) return;
    if (settled === undefined) return this.#persistNow(runId);
    this.#joins.delete(runId);
    const now = capture(actor);
    this.#write(runId, { ...now, persisted: withSettled(now.persisted, settled) });
  }

  /** Ids of the runs that have a live actor now. */
  liveRuns(): string[] {
    return [...this.#live.keys()];
  }

  /** Whether a run has a live actor. */
  isLive(runId: string): boolean {
    return this.#live.has(runId);
  }

  /** A run's context now: from its live actor, else from its stored snapshot; null when unknown. */
  contextOf(runId: string): RunContext | null {
    const live = this.#live.get(runId);
    if (live !== undefined) return live.getSnapshot().context;
    const stored = this.store.snapshots.get(runId);
    return storedContext(stored);
  }

  /**
   * Starts a new run. Its first state is committed with the next transaction the store opens,
   * or at the end of this event-loop turn: `stored` says when.
   */
  start(input: RunInput): void {
    if (this.#live.has(input.runId) || this.store.snapshots.has(input.runId)) {
      throw new Error(`run ${input.runId} already exists`);
    }
    this.events.onStarted?.(input);
    this.#unstored.set(input.runId, []);
    this.#spawn(input, undefined);
  }

  /**
   * Resolves true once a run is in the store (a started run's first state committed; at once
   * for one already stored), false when it is neither stored nor live (or the host stopped
   * before its first write).
   */
  stored(runId: string): Promise<boolean> {
    const waiting = this.#unstored.get(runId);
    if (waiting === undefined)
      return Promise.resolve(this.#live.has(runId) || this.store.snapshots.has(runId));
    return new Promise((resolve) => waiting.push(resolve));
  }

  /**
   * Restores a persisted run (after a restart or to deliver a decision to a parked run).
   * Returns false when there is nothing to restore (unknown or terminal run).
   */
  restore(runId: string): boolean {
    if (this.#live.has(runId)) return true;
    const stored = this.store.snapshots.get(runId);
    if (stored === null || TERMINAL.has(stored.status)) return false;
    const snapshot = stored.snapshot as unknown as RunSnapshot;
    const input = (snapshot as unknown as { context: RunInput }).context;
    this.#spawn(input, snapshot);
    this.#restored.add(runId);
    this.events.onRestored?.(input);
    return true;
  }

  /**
   * Whether a live run was restored from a snapshot: the steps after its last snapshot may run
   * again (a snapshot can lag the audit by one event-loop turn), so their audit steps may already
   * be recorded.
   */
  wasRestored(runId: string): boolean {
    return this.#restored.has(runId);
  }

  /**
   * Delivers a human decision (or an expiry) to the run waiting on it, restoring the run when
   * it is parked. Each approval is delivered at most once.
   */
  deliver(approval: ApprovalRecord): void {
    this.#deliver(approval, false);
  }

  #deliver(approval: ApprovalRecord, fromQueue: boolean): void {
    if (approval.status === 'pending' || approval.runId === null) return;
    if (this.#delivered.get(approval.runId)?.has(approval.id) === true) return;
    if (!this.#live.has(approval.runId)) {
      // A parked run: at most RESUME_CONCURRENCY of them come back at once; the rest wait their
      // turn in order (the decision is already durable in the store; a restart delivers it again).
      if (this.#resuming >= RESUME_CONCURRENCY || (!fromQueue && this.#queued.length > 0)) {
        if (!this.#queuedIds.has(approval.id)) {
          this.#queuedIds.add(approval.id);
          this.#queued.push(approval);
        }
        return;
      }
      if (!this.restore(approval.runId)) return;
      this.#resuming++;
      this.#send(approval.runId, approval);
      // Settled once it ends, parks or waits for a human again (the decision was sent above).
      void this.#held(approval.runId).then(() => {
        this.#resuming--;
        // The next one after a turn of the event loop: a chain of resumes that only ever waits
        // on promises would otherwise keep sockets and timers (the sidecar, the bus) waiting.
        setImmediate(() => this.#nextQueued());
      });
      return;
    }
    this.#send(approval.runId, approval);
  }

  #send(runId: string, approval: ApprovalRecord): void {
    const actor = this.#live.get(runId);
    if (actor === undefined || approval.status === 'pending') return;
    let delivered = this.#delivered.get(runId);
    if (delivered === undefined) this.#delivered.set(runId, (delivered = new Set()));
    delivered.add(approval.id);
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: approval.id,
      decision: approval.status,
      user: approval.decidedBy,
      reason: approval.decisionReason,
    });
  }

  /**
   * Cancels a run (a human's request through its surface): a parked run is restored first. The
   * run ends `failed` with reason `cancelled: <reason>`. False when there is no run to cancel.
   */
  cancel(runId: string, reason: string): boolean {
    if (!this.#live.has(runId) && !this.restore(runId)) return false;
    this.#live.get(runId)?.send({ type: 'CANCEL', reason });
    return true;
  }

  /**
   * Resolves once a run no longer needs the CPU for now: it has no live actor (ended, parked,
   * stopped or never restored), or it waits for a human (`waiting_for_approval`). Boot uses it
   * to bound how many restored runs go on at once.
   */
  whenSettled(runId: string): Promise<void> {
    const actor = this.#live.get(runId);
    if (actor === undefined || statusOf(actor.getSnapshot()) === 'waiting_for_approval')
      return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.#settled.get(runId);
      if (waiting === undefined) this.#settled.set(runId, [resolve]);
      else waiting.push(resolve);
    });
  }

  /** Until a run settles, or `RESUME_SLOT_MS` at the latest (a long run does not hold the others back). */
  #held(runId: string): Promise<void> {
    let timer: TimerHandle | undefined;
    const late = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(resolve, RESUME_SLOT_MS);
    });
    return Promise.race([this.whenSettled(runId), late]).finally(() => this.clock.clearTimeout(timer));
  }

  #nextQueued(): void {
    while (!this.#stopping && this.#resuming < RESUME_CONCURRENCY) {
      const next = this.#queued.shift();
      if (next === undefined) return;
      this.#queuedIds.delete(next.id);
      this.#deliver(next, true);
    }
  }

  #settle(runId: string): void {
    const waiting = this.#settled.get(runId);
    if (waiting === undefined) return;
    this.#settled.delete(runId);
    for (const resolve of waiting) resolve();
  }

  /** Persists and stops a run's actor: the run stays parked in the store until a decision. */
  park(runId: string): void {
    const actor = this.#live.get(runId);
    if (actor === undefined) return;
    this.#persist(runId, actor.getSnapshot(), actor);
    this.#drop(runId);
    actor.stop();
  }

  /** Stops every live actor after persisting it; used at shutdown. */
  stopAll(): void {
    this.#stopping = true;
    this.#queued.length = 0;
    this.#queuedIds.clear();
    for (const [runId, actor] of [...this.#live]) {
      this.#persist(runId, actor.getSnapshot(), actor);
      this.#drop(runId);
      actor.stop();
    }
    for (const runId of [...this.#unstored.keys()]) this.#committed(runId, this.store.snapshots.has(runId));
  }

  #spawn(input: RunInput, snapshot: RunSnapshot | undefined): void {
    if (this.#machine === null) throw new Error('RunHost: no run machine set');
    const inspect = this.inspect;
    const options = inspect === undefined ? {} : { inspect: (e: InspectionEvent) => inspect(input.runId, e) };
    // A run restored after its wall-time deadline passed (while no process ran it) ends at once:
    // its in-flight effect is not started again (no invoked child is restored) before DEADLINE.
    const overdue = snapshot !== undefined && input.startedAt + input.budget.wallTimeMs <= this.clock.now();
    const restored = overdue ? ({ ...snapshot, children: {} } as unknown as RunSnapshot) : snapshot;
    const actor =
      restored === undefined
        ? createActor(this.#machine, { input, ...options })
        : createActor(this.#machine, { input, snapshot: restored, ...options });
    this.#live.set(input.runId, actor);
    let last: RunStatus | null = null;
    // A restored run starts from the snapshot just read from the store: its first state (the
    // same object, XState's `start` notifies it unchanged) is not written back.
    let asStored: RunSnapshot | null = restored !== undefined && !overdue ? actor.getSnapshot() : null;
    actor.subscribe({
      next: (s) => {
        if (this.#live.get(input.runId) !== actor) return;
        const stored = s === asStored;
        asStored = null;
        const status = statusOf(s);
        if (stored) {
          // Nothing to write: the row is this state.
        } else if (persistAtOnce(last, status, s)) this.#persist(input.runId, s, actor);
        else this.#schedulePersist(input.runId, actor, last === null);
        if (status !== last) {
          last = status;
          this.events.onStatus(input.runId, status, s.context);
          if (status === 'waiting_for_approval') this.#settle(input.runId);
        }
        if (s.status === 'done') {
          this.#drop(input.runId);
          this.#delivered.delete(input.runId);
          this.events.onEnded(input.runId, s.output ?? { status: 'failed', reason: 'no_outcome' }, s.context);
        }
      },
      error: () => {
        // Effects report failures as events; an error here is a bug in the machine wiring.
        this.#drop(input.runId);
      },
    });
    this.#armDeadline(input);
    // The first state is not a transition: told here, before anything can move the run on.
    this.observe?.(input.runId, actor.getSnapshot(), INIT_EVENT);
    actor.start();
    if (overdue) actor.send({ type: 'DEADLINE' });
    else if (restored !== undefined) for (const e of settledEffectEvents(restored)) actor.send(e as never);
  }

  /**
   * Coalesces a run's snapshot write to the end of the event-loop turn, where every run's write
   * due then is one transaction (one commit for all the runs in flight, not one each). With
   * `joins`, the write also joins the next transaction the store opens if that comes first (see
   * `#writeDue`); the run's later steps in the turn are coalesced again. Only what the run's next
   * commits depend on joins: every commit carrying every run's latest step would write a run
   * once per commit of the turn instead of once per turn.
   */
  #schedulePersist(runId: string, actor: RunActor, joins = false): void {
    this.#scheduled.set(runId, actor);
    if (joins) this.#joins.set(runId, capture(actor));
    this.#armFlush();
  }

  #armFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const due = [...this.#scheduled].filter(([id, a]) => this.#live.get(id) === a);
      this.#scheduled.clear();
      this.#joins.clear();
      if (due.length === 0) return;
      const write = () => {
        for (const [id, a] of due) this.#persist(id, a.getSnapshot(), a);
      };
      if (due.length === 1) write();
      else this.store.transaction(write);
    });
  }

  #armDeadline(input: RunInput): void {
    const due = input.startedAt + input.budget.wallTimeMs - this.clock.now();
    const timer = this.clock.setTimeout(() => this.#live.get(input.runId)?.send({ type: 'DEADLINE' }), due);
    this.#deadlines.set(input.runId, timer);
  }

  #drop(runId: string): void {
    this.#live.delete(runId);
    this.#settle(runId);
    this.#restored.delete(runId);
    const t = this.#deadlines.get(runId);
    if (t) this.clock.clearTimeout(t);
    this.#deadlines.delete(runId);
  }

  /**
   * Inside a transaction the store opened, before it commits (or a savepoint begins): writes
   * the due states that join (a first state, a model answer) in it, so nothing committed depends
   * on an answer the stored run does not have (the audit of a call, its approval or ledger row
   * commit with the answer that proposed it, or after). A write that fails here is left due for the end of the turn, where it fails on its own
   * instead of rolling back the transaction it joined.
   */
  #writeDue(): void {
    if (this.#joining || this.#joins.size === 0) return;
    this.#joining = true;
    try {
      const due = [...this.#joins];
      this.#joins.clear();
      for (const [id, c] of due) {
        const a = c.actor;
        if (this.#scheduled.get(id) !== a || this.#live.get(id) !== a) continue;
        // A later step of the run is still due at the end of the turn.
        if (a.getSnapshot() === c.snapshot) this.#scheduled.delete(id);
        try {
          this.#write(id, c);
        } catch {
          this.#scheduled.set(id, a);
          this.#armFlush();
        }
      }
    } finally {
      this.#joining = false;
    }
  }

  /** Something in the open transaction rolled back: what was written in it is due again. */
  #undone(): void {
    for (const [id, c] of this.#inTx) {
      if (this.#live.get(id) === c.actor) {
        this.#scheduled.set(id, c.actor);
        // What was written is due again as it was (a join captured since is newer).
        if (!this.#joins.has(id)) this.#joins.set(id, c);
        this.#armFlush();
      } else this.#committed(id, false);
    }
    this.#inTx.clear();
  }

  /** A transaction the store opened ended: what was written in it is stored when it committed. */
  #ended(committed: boolean): void {
    if (!committed) return this.#undone();
    for (const id of this.#inTx.keys()) this.#committed(id, true);
    this.#inTx.clear();
  }

  #committed(runId: string, stored: boolean): void {
    const waiting = this.#unstored.get(runId);
    if (waiting === undefined) return;
    this.#unstored.delete(runId);
    for (const resolve of waiting) resolve(stored);
  }

  /** Writes a run's state now (outside any transition of it: see `capture`); an older due join is superseded. */
  #persist(runId: string, s: RunSnapshot, actor: RunActor): void {
    if (this.#stopping && !this.#live.has(runId)) return;
    this.#joins.delete(runId);
    this.#write(runId, s === actor.getSnapshot() ? capture(actor) : { ...capture(actor), snapshot: s });
  }

  #write(runId: string, c: Captured): void {
    const s = c.snapshot;
    const ctx = s.context;
    this.store.snapshots.put(
      {
        runId,
        agentId: ctx.agentId,
        surface: ctx.surface,
        status: statusOf(s),
        parentRunId: ctx.parentRunId,
        snapshot: c.persisted as Record<string, unknown>,
      },
      c.token,
    );
    if (this.store.inTransaction) this.#inTx.set(runId, c);
    else this.#committed(runId, true);
  }
}

/**
 * A persisted run snapshot with its active child invoked from `settled.src` as XState persists a
 * promise effect that has returned `settled.output` (status, output; no input). The run's state
 * does not move when that child ends (nothing waits on it), so this is the row its next write
 * would be, and the store skips a write whose row is the same.
 */
function withSettled(persisted: unknown, settled: SettledEffect): unknown {
  const p = persisted as { children?: Record<string, { src?: unknown; snapshot?: { status?: unknown } }> };
  const children = { ...(p.children ?? {}) };
  let found = false;
  for (const [key, child] of Object.entries(children)) {
    if (child.src !== settled.src || child.snapshot?.status !== 'active') continue;
    children[key] = {
      ...child,
      snapshot: { status: 'done', output: settled.output, error: undefined, input: undefined },
    } as (typeof children)[string];
    found = true;
  }
  // No such effect (not expected): the state as it is now, written again when the run moves.
  return found ? { ...p, children } : persisted;
}

/**
 * The completions a restored run still has to hear: an invoked effect stored as already done (or
 * failed) while the run still sat in the state that invoked it. XState does not restart a settled
 * effect nor send its completion again, so such a run would wait for it until its deadline. Rows
 * written by this version never hold one the run waits on (see `capture`); older rows might, and
 * the run goes on from the stored result, as the process that wrote it would have. A state that
 * does not wait on its effect (a parked run's approval request) ignores the event.
 */
function settledEffectEvents(persisted: RunSnapshot): Array<{ type: string; actorId: string }> {
  const children = (
    persisted as unknown as { children?: Record<string, { snapshot?: Record<string, unknown> }> }
  ).children;
  const out: Array<{ type: string; actorId: string; output?: unknown; error?: unknown }> = [];
  for (const [id, child] of Object.entries(children ?? {})) {
    const s = child.snapshot;
    if (s?.status === 'done') out.push({ type: `xstate.done.actor.${id}`, output: s.output, actorId: id });
    else if (s?.status === 'error')
      out.push({ type: `xstate.error.actor.${id}`, error: s.error, actorId: id });
  }
  return out;
}

/** A run's state as it was at one moment: its snapshot and, computed then, its persisted form. */
interface Captured {
  readonly actor: RunActor;
  readonly snapshot: RunSnapshot;
  readonly persisted: unknown;
  /** The immutable objects the persisted form was computed from (see `persistedFrom`). */
  readonly token: object[];
}

/**
 * A run's state now, persisted form included. A due write joining a transaction may run inside
 * the run's own transition (an audit action commits): XState's snapshot is then still the old
 * state while the child that settled is already done, and a persisted form computed then would
 * sit in the invoking state with a finished child — restored, that run waits for a completion
 * that never comes again. So a due state is captured when it becomes due (after the transition
 * that made it, its children started), and that capture is what joins.
 */
function capture(actor: RunActor): Captured {
  const snapshot = actor.getSnapshot();
  return { actor, snapshot, persisted: actor.getPersistedSnapshot(), token: persistedFrom(snapshot) };
}

/**
 * Whether a run's new state is written at once rather than being due at the end of this
 * event-loop turn (or at the run's park, or the host's stop, whichever is first). At once: a wait
 * for a human (also written with the approval it waits on, see `persistCurrent`), every other
 * status a run rests in, and its end. Due: every other step, a resumed run's return to `running`
 * included; a new run's first state (its start is acknowledged once it is stored, see `stored`)
 * and each model answer (`recordStep`) also join the next transaction the store opens if it comes
 * first, so the audit, approval and ledger rows of the calls an answer proposes commit with it or
 * after it. A crash can only lose the steps of the current turn, which re-run on restore behind
 * the audit (a step already recorded is not recorded again) and the ledger (a completed call is
 * never executed again, a started one is reported interrupted).
 */
function persistAtOnce(last: RunStatus | null, status: RunStatus, s: RunSnapshot): boolean {
  if (s.status === 'done') return true;
  return last !== null && status !== last && status !== 'running';
}

/**
 * The immutable XState snapshots a run's persisted snapshot is computed from: its own and, depth
 * first, every child's (an invoked effect settles in its child's snapshot before the run's own
 * moves). The same objects give the same persisted snapshot, so the store can skip the write.
 */
function persistedFrom(s: RunSnapshot): object[] {
  const out: object[] = [s];
  const visit = (children: Record<string, unknown> | undefined): void => {
    for (const child of Object.values(children ?? {})) {
      const snap = (child as { getSnapshot?: () => unknown } | undefined)?.getSnapshot?.();
      if (typeof snap !== 'object' || snap === null) continue;
      out.push(snap);
      visit((snap as { children?: Record<string, unknown> }).children);
    }
  };
  visit(s.children as Record<string, unknown>);
  return out;
}
