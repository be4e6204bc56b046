import { createActor, fromPromise, type InspectionEvent, type Snapshot } from 'xstate';
import { restorableRun, storedContext } from './stored-run.ts';
import type { ApprovalRecord, RunStatus, Store } from '../../store/index.ts';
import type { SettledEffect } from '../../actors/run/effects.ts';
import type { RunContext, RunInput, RunOutcome } from '../../machines/run/types.ts';
import { observedMachine } from './observed-machine.ts';
import type { Clock } from '../time/clock.ts';
import { isTerminal, statusOf, type RunMachine, type RunSnapshot } from './run-status.ts';
import { LiveRuns } from './live-runs.ts';
import { RunSignals } from './run-signals.ts';
import { WriteBehind } from './write-behind.ts';
import { ResumeQueue } from './resume-queue.ts';
import { settledEffectEvents, withoutChildren } from './snapshot-repair.ts';

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

/**
 * Hosts run actors: starts them, persists every snapshot change (so a crash resumes from the
 * last step), parks unattended runs waiting for a human (snapshot persisted, actor stopped),
 * and brings a parked run back to deliver a decision. A run is live in at most one actor.
 *
 * A coordinator over one module per job: `LiveRuns` (the live actors, their deadlines and who
 * waits for them), `WriteBehind` (their snapshot writes), `ResumeQueue` (decisions delivered,
 * parked runs brought back a few at a time), `snapshot-repair.ts` (edits to stored snapshots) and
 * `stored-run.ts` (the one reader of a stored run).
 */
export class RunHost {
  readonly #live: LiveRuns;
  readonly #writes: WriteBehind;
  readonly #resumes: ResumeQueue;
  readonly #signals = new RunSignals();
  /** The provided run machine and who hears about runs (see `wire`). */
  #wired: { readonly machine: RunMachine; readonly events: RunHostEvents } | null = null;

  constructor(
    private readonly store: Store,
    /** Wall-time deadlines and resume slots are read and armed on this clock. */
    clock: Clock,
    /**
     * Receives XState's inspection events of every run actor (state changes, events, effects,
     * microsteps, actions, of the run and of its children): complete, and costly on the hot path.
     */
    private readonly inspect?: (runId: string, event: InspectionEvent) => void,
    /** Receives every state a run actor takes, with its cause (see `RunObserver`): cheap. */
    private readonly observe?: RunObserver,
  ) {
    const live = new LiveRuns(clock);
    this.#live = live;
    this.#writes = new WriteBehind(store, (runId) => live.get(runId));
    this.#resumes = new ResumeQueue(
      {
        live: (runId) => live.get(runId),
        restore: (runId) => this.restore(runId),
        whenSettled: (runId) => live.whenSettled(runId),
      },
      clock,
    );
  }

  /**
   * Wires the host, once, after every part the run machine's effects and `events` call exists:
   * no run starts or is restored before (`start` and `restore` throw). The host provides `recordStep` itself: the run's snapshot, holding the model's answer, is due
   * from then on, so it commits with (or before) whatever the store commits next — the audit of a
   * proposed call, its approval, its ledger row — and at the end of the turn at the latest.
   */
  wire(machine: RunMachine, events: RunHostEvents): void {
    if (this.#wired !== null) throw new Error('RunHost: already wired');
    const provided = machine.provide({
      actors: {
        recordStep: fromPromise<void, { context: RunContext }>(async ({ input }) => {
          const runId = input.context.runId;
          const actor = this.#live.get(runId);
          if (actor === undefined) throw new Error(`run ${runId} is not live`);
          this.#writes.schedule(runId, actor, true);
        }),
      },
    }) as RunMachine;
    const observe = this.observe;
    this.#wired = {
      machine:
        observe === undefined
          ? provided
          : observedMachine(provided, (s, e) => observe(s.context.runId, s, e as { readonly type: string })),
      events,
    };
  }

  #wiring(): { readonly machine: RunMachine; readonly events: RunHostEvents } {
    if (this.#wired === null) throw new Error('RunHost: no run machine set');
    return this.#wired;
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
    this.#writes.persistCurrent(runId, actor, settled);
  }

  /** Ids of the runs that have a live actor now. */
  liveRuns(): string[] {
    return this.#live.ids();
  }

  /** A live run's status now; null when it has no live actor. */
  liveStatus(runId: string): RunStatus | null {
    const actor = this.#live.get(runId);
    return actor === undefined ? null : statusOf(actor.getSnapshot());
  }

  /** Whether a run has a live actor. */
  isLive(runId: string): boolean {
    return this.#live.has(runId);
  }

  /** A run's context now: from its live actor, else from its stored snapshot; null when unknown. */
  contextOf(runId: string): RunContext | null {
    const live = this.#live.get(runId);
    if (live !== undefined) return live.getSnapshot().context;
    return storedContext(this.store.snapshots.get(runId));
  }

  /**
   * Starts a new run. Its first state is committed with the next transaction the store opens,
   * or at the end of this event-loop turn: `stored` says when.
   */
  start(input: RunInput): void {
    if (this.#live.has(input.runId) || this.store.snapshots.has(input.runId)) {
      throw new Error(`run ${input.runId} already exists`);
    }
    this.#wiring().events.onStarted?.(input);
    this.#writes.expectFirst(input.runId);
    this.#spawn(input, undefined);
  }

  /**
   * Resolves true once a run is in the store (a started run's first state committed; at once
   * for one already stored), false when it is neither stored nor live (or the host stopped
   * before its first write).
   */
  stored(runId: string): Promise<boolean> {
    return this.#writes.stored(runId);
  }

  /**
   * Restores a persisted run (after a restart or to deliver a decision to a parked run).
   * Returns false when there is nothing to restore (unknown or terminal run).
   */
  restore(runId: string): boolean {
    if (this.#live.has(runId)) return true;
    const stored = this.store.snapshots.get(runId);
    if (stored === null || isTerminal(stored.status)) return false;
    const { input, snapshot } = restorableRun(runId, stored);
    this.#spawn(input, snapshot);
    this.#live.markRestored(runId);
    this.#wiring().events.onRestored?.(input);
    return true;
  }

  /**
   * Whether a live run was restored from a snapshot: the steps after its last snapshot may run
   * again (a snapshot can lag the audit by one event-loop turn), so their audit steps may already
   * be recorded.
   */
  wasRestored(runId: string): boolean {
    return this.#live.wasRestored(runId);
  }

  /**
   * Delivers a human decision (or an expiry) to the run waiting on it, restoring the run when
   * it is parked. Each approval is delivered at most once.
   */
  deliver(approval: ApprovalRecord): void {
    this.#resumes.deliver(approval);
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
   * Interrupts a live run at a human's request (Ctrl-C in a chat): its current state is
   * persisted, its actor stopped and its in-flight effects aborted (a model request, a tool's
   * child process), as a shutdown would; the run stays in the store unfinished and goes on with
   * `restore` (or at the next boot). A tool call cut short is recorded as the ledger says
   * (cancelled, or interrupted), never run twice. False when the run is not live.
   */
  interrupt(runId: string): boolean {
    if (!this.#live.has(runId)) return false;
    this.park(runId);
    this.#signals.abort(runId);
    return true;
  }

  /** The cancel signal of a run's effects: aborted by `interrupt` or with `base` (the runtime's stop). */
  signalOf(runId: string, base: AbortSignal): AbortSignal {
    return this.#signals.signalOf(runId, base);
  }

  /**
   * Resolves once a run no longer needs the CPU for now: it has no live actor (ended, parked,
   * stopped or never restored), or it waits for a human (`waiting_for_approval`). Boot uses it
   * to bound how many restored runs go on at once.
   */
  whenSettled(runId: string): Promise<void> {
    return this.#live.whenSettled(runId);
  }

  /** Persists and stops a run's actor: the run stays parked in the store until a decision. */
  park(runId: string): void {
    const actor = this.#live.get(runId);
    if (actor === undefined) return;
    this.#writes.persist(runId, actor.getSnapshot(), actor);
    this.#live.drop(runId);
    actor.stop();
  }

  /** Stops every live actor after persisting it; used at shutdown. */
  stopAll(): void {
    this.#writes.stop();
    this.#resumes.stop();
    for (const [runId, actor] of this.#live.entries()) {
      this.#writes.persist(runId, actor.getSnapshot(), actor);
      this.#live.drop(runId);
      actor.stop();
    }
    this.#writes.releaseWaiters();
  }

  #spawn(input: RunInput, snapshot: Snapshot<unknown> | undefined): void {
    const { machine, events } = this.#wiring();
    const inspect = this.inspect;
    const options = inspect === undefined ? {} : { inspect: (e: InspectionEvent) => inspect(input.runId, e) };
    // A run restored after its wall-time deadline passed (while no process ran it) ends at once:
    // its in-flight effect is not started again (no invoked child is restored) before DEADLINE.
    const overdue = snapshot !== undefined && this.#live.overdue(input);
    const restored = overdue ? withoutChildren(snapshot) : snapshot;
    const actor =
      restored === undefined
        ? createActor(machine, { input, ...options })
        : createActor(machine, { input, snapshot: restored, ...options });
    this.#live.add(input.runId, actor);
    let last: RunStatus | null = null;
    // A restored run starts from the snapshot just read from the store: its first state (the
    // same object, XState's `start` notifies it unchanged) is not written back.
    let asStored: RunSnapshot | null = restored !== undefined && !overdue ? actor.getSnapshot() : null;
    actor.subscribe({
      next: (s) => {
        if (this.#live.get(input.runId) !== actor) return;
        // A throw here is nobody's to catch (XState reports it as uncaught). A store closed under
        // a live run (a test's simulated crash; a runtime stops its runs before its store) gets
        // nothing written and nobody told; the run only leaves its actor when it ends.
        if (!this.store.open) {
          if (s.status === 'done') this.#live.drop(input.runId);
          return;
        }
        const stored = s === asStored;
        asStored = null;
        const status = statusOf(s);
        // A stored state has nothing to write: the row is this state.
        if (!stored) this.#writes.stepped(input.runId, actor, s, last);
        // An approved wall-time request moved the deadline.
        this.#live.rearmIfMoved(s.context);
        if (status !== last) {
          last = status;
          events.onStatus(input.runId, status, s.context);
          if (status === 'waiting_for_approval') this.#live.settle(input.runId);
        }
        if (s.status === 'done') {
          this.#live.drop(input.runId);
          this.#resumes.forget(input.runId);
          this.#signals.forget(input.runId);
          events.onEnded(input.runId, s.output ?? { status: 'failed', reason: 'no_outcome' }, s.context);
        }
      },
      error: () => {
        // Effects report failures as events; an error here is a bug in the machine wiring.
        this.#live.drop(input.runId);
      },
    });
    this.#live.armDeadline(input);
    // The first state is not a transition: told here, before anything can move the run on.
    this.observe?.(input.runId, actor.getSnapshot(), INIT_EVENT);
    actor.start();
    if (overdue) actor.send({ type: 'DEADLINE' });
    else if (restored !== undefined) for (const e of settledEffectEvents(restored)) actor.send(e as never);
  }
}
