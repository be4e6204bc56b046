import type { Statement } from 'better-sqlite3';
import { assertWritable, type StoreContext } from '../context.ts';

/** Whether a firing started a run or was not run. */
export type FiringStatus = 'started' | 'skipped';

/** One recorded firing of a scheduled task: identity is `taskId` + `fireAt` (the scheduled time). */
export interface FiringRecord {
  readonly taskId: string;
  /** The scheduled fire time (ms since the epoch), not the moment the timer woke. */
  readonly fireAt: number;
  readonly status: FiringStatus;
  /** Why it was skipped (`missed_while_down`, `previous_run_active`, …), or how it started (`on_time`, `catch_up`). */
  readonly reason: string | null;
  /** The run a `started` firing starts (deterministic from the identity); null when skipped. */
  readonly runId: string | null;
  readonly recordedAt: number;
}

interface FiringRow {
  task_id: string;
  fire_at: number;
  status: FiringStatus;
  reason: string | null;
  run_id: string | null;
  recorded_at: number;
}

const toRecord = (r: FiringRow): FiringRecord => ({
  taskId: r.task_id,
  fireAt: r.fire_at,
  status: r.status,
  reason: r.reason,
  runId: r.run_id,
  recordedAt: r.recorded_at,
});

const DURABLE = { durable: true } as const;

/**
 * The scheduler's journal (schema version 4). A firing is recorded once, durably (fsynced: a
 * firing lost on power loss would run again), before its run is started; a second record of the
 * same firing changes nothing and says so. On a file older than version 4 (read-only opens) the
 * reads return nothing.
 */
export class ScheduleJournal {
  readonly #present: boolean;
  readonly #stmts: {
    task: Statement<[string], { pattern: string; since: number }>;
    putTask: Statement<[string, string, number]>;
    insert: Statement<FiringRow>;
    last: Statement<[string], { fire_at: number | null }>;
    latestStarted: Statement<[string], FiringRow>;
    unstarted: Statement<[], FiringRow>;
    list: Statement<{ task: string | null; limit: number }, FiringRow>;
  } | null;

  constructor(private readonly ctx: StoreContext) {
    const db = ctx.db;
    this.#present =
      (db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'schedule_firings'")
        .pluck()
        .get() as number) > 0;
    this.#stmts = !this.#present
      ? null
      : {
          task: db.prepare('SELECT pattern, since FROM schedule_tasks WHERE task_id = ?'),
          putTask: db.prepare(
            `INSERT INTO schedule_tasks (task_id, pattern, since) VALUES (?, ?, ?)
             ON CONFLICT (task_id) DO UPDATE SET pattern = excluded.pattern, since = excluded.since`,
          ),
          insert: db.prepare(
            `INSERT INTO schedule_firings (task_id, fire_at, status, reason, run_id, recorded_at)
             VALUES (@task_id, @fire_at, @status, @reason, @run_id, @recorded_at) ON CONFLICT DO NOTHING`,
          ),
          last: db.prepare('SELECT max(fire_at) AS fire_at FROM schedule_firings WHERE task_id = ?'),
          latestStarted: db.prepare(
            `SELECT * FROM schedule_firings WHERE task_id = ? AND status = 'started'
             ORDER BY fire_at DESC LIMIT 1`,
          ),
          unstarted: db.prepare(
            `SELECT f.* FROM schedule_firings f WHERE f.status = 'started'
               AND NOT EXISTS (SELECT 1 FROM run_snapshots s WHERE s.run_id = f.run_id)
             ORDER BY f.fire_at, f.task_id`,
          ),
          list: db.prepare(
            `SELECT * FROM schedule_firings WHERE (@task IS NULL OR task_id = @task)
             ORDER BY fire_at DESC, task_id LIMIT @limit`,
          ),
        };
  }

  /**
   * Since when the task's pattern is known: the reference for firings missed while the runtime
   * was down. A new task, or one whose pattern changed, is known from `now` (a changed schedule
   * has no missed firings of its old pattern).
   */
  knownSince(taskId: string, pattern: string, now: number): number {
    const s = this.#writable('knownSince');
    const row = s.task.get(taskId);
    if (row !== undefined && row.pattern === pattern) return row.since;
    this.ctx.tx.run(() => s.putTask.run(taskId, pattern, now), DURABLE);
    return now;
  }

  /** The latest recorded fire time of a task (started or skipped), or null. */
  lastFireAt(taskId: string): number | null {
    return this.#stmts?.last.get(taskId)?.fire_at ?? null;
  }

  /** The latest firing of a task that started a run, or null. */
  latestStarted(taskId: string): FiringRecord | null {
    const row = this.#stmts?.latestStarted.get(taskId);
    return row === undefined ? null : toRecord(row);
  }

  /**
   * Records firings, all in one durable transaction. Returns, for each, whether this call
   * recorded it (false: that firing was already recorded, with whatever it said then).
   */
  record(records: readonly FiringRecord[]): boolean[] {
    const s = this.#writable('record');
    return this.ctx.tx.run(
      () =>
        records.map(
          (r) =>
            s.insert.run({
              task_id: r.taskId,
              fire_at: r.fireAt,
              status: r.status,
              reason: r.reason,
              run_id: r.runId,
              recorded_at: r.recordedAt,
            }).changes === 1,
        ),
      DURABLE,
    );
  }

  /** Started firings whose run has no snapshot yet (cut between the record and the run's start). */
  unstarted(): FiringRecord[] {
    return (this.#stmts?.unstarted.all() ?? []).map(toRecord);
  }

  /** The most recent firings, newest first (all tasks, or one). */
  list(taskId: string | null = null, limit = 100): FiringRecord[] {
    return (this.#stmts?.list.all({ task: taskId, limit }) ?? []).map(toRecord);
  }

  #writable(operation: string) {
    assertWritable(this.ctx, `schedule journal ${operation}`);
    if (this.#stmts === null)
      throw new Error(`${this.ctx.file}: schedule journal missing (schema older than 4)`);
    return this.#stmts;
  }
}
