import type { RunInput } from '../../machines/run/types.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';
import { statusOf, type RunActor } from './run-status.ts';

/**
 * The live run actors: at most one per run, each with its wall-time deadline armed, whether it
 * was restored in this process, and who waits for it to settle.
 */
export class LiveRuns {
  readonly #live = new Map<string, RunActor>();
  /** Live runs that were restored from a snapshot in this process (their steps may replay). */
  readonly #restored = new Set<string>();
  readonly #deadlines = new Map<string, { readonly at: number; readonly timer: TimerHandle }>();
  /** Who waits for a live run to settle (see `whenSettled`). */
  readonly #settled = new Map<string, Array<() => void>>();

  constructor(
    /** Wall-time deadlines are read and armed on this clock. */
    private readonly clock: Clock,
  ) {}

  /** A run's live actor, if any. */
  get(runId: string): RunActor | undefined {
    return this.#live.get(runId);
  }

  /** Whether a run has a live actor. */
  has(runId: string): boolean {
    return this.#live.has(runId);
  }

  /** Ids of the runs that have a live actor now. */
  ids(): string[] {
    return [...this.#live.keys()];
  }

  /** Every live run with its actor (a copy: dropping one while walking it is safe). */
  entries(): Array<[string, RunActor]> {
    return [...this.#live];
  }

  /** Makes `actor` the run's live actor. */
  add(runId: string, actor: RunActor): void {
    this.#live.set(runId, actor);
  }

  /** Arms the run's wall-time deadline: `DEADLINE` is sent to its live actor then. */
  armDeadline(input: RunInput): void {
    const previous = this.#deadlines.get(input.runId);
    if (previous !== undefined) this.clock.clearTimeout(previous.timer);
    const at = input.startedAt + input.budget.wallTimeMs;
    const timer = this.clock.setTimeout(
      () => this.#live.get(input.runId)?.send({ type: 'DEADLINE' }),
      at - this.clock.now(),
    );
    this.#deadlines.set(input.runId, { at, timer });
  }

  /** Arms the run's deadline again when an approved budget request moved it (a wall-time grant). */
  rearmIfMoved(input: RunInput): void {
    const armed = this.#deadlines.get(input.runId);
    if (armed !== undefined && armed.at !== input.startedAt + input.budget.wallTimeMs)
      this.armDeadline(input);
  }

  /** Whether a run's deadline has passed (a run restored then ends at once). */
  overdue(input: RunInput): boolean {
    return input.startedAt + input.budget.wallTimeMs <= this.clock.now();
  }

  /** Marks a live run as restored from a snapshot in this process. */
  markRestored(runId: string): void {
    this.#restored.add(runId);
  }

  /** Whether a live run was restored from a snapshot in this process. */
  wasRestored(runId: string): boolean {
    return this.#restored.has(runId);
  }

  /** The run has no live actor any more: its waiters are told, its deadline disarmed. */
  drop(runId: string): void {
    this.#live.delete(runId);
    this.settle(runId);
    this.#restored.delete(runId);
    const t = this.#deadlines.get(runId);
    if (t) this.clock.clearTimeout(t.timer);
    this.#deadlines.delete(runId);
  }

  /**
   * Resolves once a run no longer needs the CPU for now: it has no live actor (ended, parked,
   * stopped or never restored), or it waits for a human (`waiting_for_approval`).
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

  /** Tells whoever waits for the run to settle. */
  settle(runId: string): void {
    const waiting = this.#settled.get(runId);
    if (waiting === undefined) return;
    this.#settled.delete(runId);
    for (const resolve of waiting) resolve();
  }
}
