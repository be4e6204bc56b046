import type { FiringRecord, ScheduleJournal } from '../store/index.ts';
import { makeRunId } from '../machines/run/run-id.ts';
import type { Clock, TimerHandle } from './time/clock.ts';
import {
  firingMessageId,
  MAX_MISSED_RECORDED,
  parseSchedule,
  planMissed,
  type MissedPolicy,
  type Schedule,
} from './schedule-plan.ts';

/** One scheduled task of the config (`surfaces.scheduled[]`). */
export interface ScheduledTask {
  readonly id: string;
  readonly agent: string;
  readonly cron: string;
  readonly message: string;
  /** Firings missed while the runtime was down: `skip` (default) or `run-once`. */
  readonly missed?: MissedPolicy | undefined;
  /** How old a missed firing may be and still run with `run-once` (ms; default one hour). */
  readonly catchUpWindowMs?: number | undefined;
}

/** Thrown for a schedule whose cron pattern croner rejects; names the task. */
export class ScheduleError extends Error {
  readonly code = 'invalid_schedule';
}

/** Default `catchUpWindowMs`. */
export const DEFAULT_CATCH_UP_WINDOW_MS = 60 * 60_000;
/** Catch-up runs of several tasks start this far apart. */
export const CATCH_UP_STAGGER_MS = 250;

/** What the scheduler needs from the runtime. */
export interface SchedulerDeps {
  readonly journal: ScheduleJournal;
  /** Fire times are read and their timers armed on this clock. */
  readonly clock: Clock;
  /** Starts the firing's run with this message id (the run is `<agent>:<messageId>`); idempotent. */
  readonly start: (task: ScheduledTask, messageId: string) => Promise<void>;
  /** Whether the firing's run is still going (running, parked or resuming) or about to start. */
  readonly runActive: (firing: FiringRecord) => boolean;
  readonly log: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) => void;
}

/**
 * The scheduled tasks (DESIGN.md §3, surface `scheduled`). Every firing has an identity — task
 * id and scheduled fire time — recorded in the journal (durably) before its run is started, so a
 * restart never starts one firing twice (the record is single, and the run id derives from the
 * identity), and never loses one silently: a recorded firing whose run does not exist yet is
 * started at boot; firings missed while down are recorded as skipped or caught up once
 * (`missed`). At most one run of a task at a time: a firing that finds the previous run still
 * going is recorded as skipped (`previous_run_active`). Timers are re-armed from data, never
 * trusted to be on time.
 */
export class Scheduler {
  readonly #timers = new Map<string, TimerHandle>();
  readonly #schedules = new Map<string, Schedule>();
  #stopped = false;

  constructor(
    private readonly tasks: readonly ScheduledTask[],
    private readonly deps: SchedulerDeps,
  ) {
    for (const task of tasks) {
      try {
        this.#schedules.set(task.id, parseSchedule(task.cron));
      } catch (err) {
        throw new ScheduleError(`surfaces.scheduled[${task.id}].cron: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
  }

  /** Finishes what a crash cut, decides missed firings, then arms every task's next firing. */
  start(): void {
    const now = this.deps.clock.now();
    for (const firing of this.deps.journal.unstarted()) {
      const task = this.tasks.find((t) => t.id === firing.taskId);
      if (task === undefined) continue; // The task is gone from the config: nothing to start it with.
      this.deps.log(
        'info',
        { task: task.id, fireAt: firing.fireAt },
        'schedule: starting a recorded firing cut by a restart',
      );
      void this.#startRun(task, firing.fireAt);
    }
    let catchUps = 0;
    for (const task of this.tasks) {
      const schedule = this.#schedules.get(task.id) as Schedule;
      const since = this.deps.journal.knownSince(task.id, task.cron, now);
      // A new task (or a changed pattern) whose one-shot time is already past: with `run-once`
      // it still runs once when that time is within the catch-up window (a start slower than the
      // time it was scheduled for); otherwise it is recorded as past, once.
      let firstSeenMissed: number[] = [];
      if (since === now && this.deps.journal.lastFireAt(task.id) === null) {
        const past = schedule.between(Number.MIN_SAFE_INTEGER, now, 1);
        if (past.length > 0 && schedule.next(now) === null) {
          const window = task.catchUpWindowMs ?? DEFAULT_CATCH_UP_WINDOW_MS;
          if (task.missed === 'run-once' && now - (past[0] as number) <= window) firstSeenMissed = past;
          else this.#skip(task, [{ fireAt: past[0] as number, reason: 'past_when_scheduled' }]);
        }
      }
      const from = Math.max(since, this.deps.journal.lastFireAt(task.id) ?? since);
      const missed =
        firstSeenMissed.length > 0 ? firstSeenMissed : schedule.between(from, now, MAX_MISSED_RECORDED + 1);
      if (missed.length > MAX_MISSED_RECORDED) {
        missed.length = MAX_MISSED_RECORDED;
        this.deps.log(
          'warn',
          { task: task.id, recorded: MAX_MISSED_RECORDED },
          'schedule: more firings were missed than are recorded one by one',
        );
      }
      const plan = planMissed(
        missed,
        task.missed ?? 'skip',
        task.catchUpWindowMs ?? DEFAULT_CATCH_UP_WINDOW_MS,
        now,
      );
      this.#skip(task, plan.skipped);
      if (plan.run !== null) {
        const fireAt = plan.run;
        const timer = this.deps.clock.setTimeout(
          () => this.#fire(task, fireAt, 'catch_up'),
          catchUps++ * CATCH_UP_STAGGER_MS,
        );
        this.#timers.set(`${task.id}\0catch-up`, timer);
      }
      this.#arm(task, Math.max(now, from));
    }
  }

  /** Stops every timer; firings in progress finish. */
  stop(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) this.deps.clock.clearTimeout(t);
    this.#timers.clear();
  }

  #arm(task: ScheduledTask, after: number): void {
    if (this.#stopped) return;
    const next = (this.#schedules.get(task.id) as Schedule).next(after);
    if (next === null) return;
    const wake = (): void => {
      if (this.#stopped) return;
      const now = this.deps.clock.now();
      if (now < next) {
        // Woke early (timer granularity or a clock that differs): wait the rest.
        this.#timers.set(task.id, this.deps.clock.setTimeout(wake, next - now));
        return;
      }
      // Firings passed while the process could not run timers (suspend, a blocked loop).
      const overrun = (this.#schedules.get(task.id) as Schedule).between(next, now, MAX_MISSED_RECORDED);
      this.#fire(task, next, 'on_time');
      this.#skip(
        task,
        overrun.map((fireAt) => ({ fireAt, reason: 'overrun' })),
      );
      this.#arm(task, Math.max(next, now));
    };
    this.#timers.set(task.id, this.deps.clock.setTimeout(wake, next - this.deps.clock.now()));
  }

  #fire(task: ScheduledTask, fireAt: number, how: 'on_time' | 'catch_up'): void {
    if (this.#stopped) return;
    const previous = this.deps.journal.latestStarted(task.id);
    if (previous !== null && previous.fireAt !== fireAt && this.deps.runActive(previous)) {
      this.#skip(task, [{ fireAt, reason: 'previous_run_active' }]);
      return;
    }
    const messageId = firingMessageId(task.id, fireAt);
    const [recorded] = this.deps.journal.record([
      {
        taskId: task.id,
        fireAt,
        status: 'started',
        reason: how,
        runId: makeRunId(task.agent, messageId),
        recordedAt: this.deps.clock.now(),
      },
    ]);
    if (recorded !== true) return; // This firing was already recorded: it started (or was skipped) before.
    this.deps.log(
      'info',
      { task: task.id, agentId: task.agent, fireAt, how, runId: makeRunId(task.agent, messageId) },
      'schedule: fired',
    );
    void this.#startRun(task, fireAt);
  }

  async #startRun(task: ScheduledTask, fireAt: number): Promise<void> {
    try {
      await this.deps.start(task, firingMessageId(task.id, fireAt));
    } catch (err) {
      // Recorded but not started: the next boot starts it (journal `unstarted`).
      this.deps.log(
        'error',
        { task: task.id, fireAt, err: (err as Error).message },
        'schedule: run could not start',
      );
    }
  }

  #skip(task: ScheduledTask, skipped: readonly { fireAt: number; reason: string }[]): void {
    if (skipped.length === 0) return;
    const now = this.deps.clock.now();
    const recorded = this.deps.journal.record(
      skipped.map((s) => ({
        taskId: task.id,
        fireAt: s.fireAt,
        status: 'skipped',
        reason: s.reason,
        runId: null,
        recordedAt: now,
      })),
    );
    skipped.forEach((s, i) => {
      if (recorded[i] === true)
        this.deps.log(
          'info',
          { task: task.id, agentId: task.agent, fireAt: s.fireAt, reason: s.reason },
          'schedule: firing skipped',
        );
    });
  }
}
