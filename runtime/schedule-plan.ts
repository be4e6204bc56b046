import { createHash } from 'node:crypto';
import { Cron } from 'croner';

/** What to do with firings missed while the runtime was down (`surfaces.scheduled[].missed`). */
export type MissedPolicy = 'skip' | 'run-once';

/** Most missed firings of one task recorded one by one; older ones are counted in the log. */
export const MAX_MISSED_RECORDED = 1000;

/** A task's schedule: an ISO date-time (one shot) or a cron pattern, read by croner. */
export interface Schedule {
  /** The first fire time strictly after `after` (ms), or null when there is none. */
  next(after: number): number | null;
  /** Fire times in (`from`, `to`], newest first, at most `limit`. */
  between(from: number, to: number, limit: number): number[];
}

/** Parses a task's `cron` (throws croner's error for a bad one). */
export function parseSchedule(cron: string): Schedule {
  const job = new Cron(cron, { paused: true });
  const once = job.getOnce();
  if (once !== null) {
    const at = once.getTime();
    return {
      next: (after) => (at > after ? at : null),
      between: (from, to, limit) => (at > from && at <= to && limit > 0 ? [at] : []),
    };
  }
  return {
    next: (after) => job.nextRun(new Date(after))?.getTime() ?? null,
    between: (from, to, limit) =>
      job
        .previousRuns(limit, new Date(to + 1))
        .map((d) => d.getTime())
        .filter((t) => t > from && t <= to),
  };
}

/** A firing decided at boot for the firings missed while the runtime was down. */
export interface MissedPlan {
  /** The one missed firing to run now (catch-up), or null. */
  readonly run: number | null;
  /** Every other missed firing, with why it is not run. */
  readonly skipped: readonly { fireAt: number; reason: string }[];
}

/**
 * Decides the firings missed while the runtime was down (`missed`, newest first): with `skip`
 * none runs; with `run-once` the newest one runs when it is within `catchUpWindowMs` of `now`,
 * and the others are skipped as covered by it.
 */
export function planMissed(
  missed: readonly number[],
  policy: MissedPolicy,
  catchUpWindowMs: number,
  now: number,
): MissedPlan {
  const [newest, ...older] = missed;
  if (newest === undefined) return { run: null, skipped: [] };
  if (policy === 'skip')
    return { run: null, skipped: missed.map((fireAt) => ({ fireAt, reason: 'missed_while_down' })) };
  if (now - newest > catchUpWindowMs)
    return { run: null, skipped: missed.map((fireAt) => ({ fireAt, reason: 'outside_catch_up_window' })) };
  return { run: newest, skipped: older.map((fireAt) => ({ fireAt, reason: 'coalesced_into_catch_up' })) };
}

/**
 * The message id of one firing: the same for the same task and fire time in every process, so
 * the run it starts (`<agent>:<message id>`) exists at most once whoever sends it how often.
 */
export function firingMessageId(taskId: string, fireAt: number): string {
  const h = createHash('sha256').update(taskId).update('\0').update(String(fireAt)).digest('hex');
  return `fire-${new Date(fireAt).toISOString().replace(/[:.]/g, '')}-${h.slice(0, 16)}`;
}
