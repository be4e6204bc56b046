import { Cron } from 'croner';

/** One scheduled task of the config (`surfaces.scheduled[]`). */
export interface ScheduledTask {
  readonly id: string;
  readonly agent: string;
  readonly cron: string;
  readonly message: string;
}

/** Thrown for a schedule whose cron pattern croner rejects; names the task. */
export class ScheduleError extends Error {
  readonly code = 'invalid_schedule';
}

/**
 * Starts the scheduled tasks: each firing starts an unattended run of the task's agent with the
 * task id (so its standing approvals apply and its approvals park in the Inbox). Returns a stop
 * function. A bad pattern fails at start, naming the task, before any job runs.
 */
export function startSchedules(
  tasks: readonly ScheduledTask[],
  fire: (task: ScheduledTask) => void,
): () => void {
  const jobs: Cron[] = [];
  try {
    for (const task of tasks) {
      try {
        jobs.push(new Cron(task.cron, { protect: true, catch: true }, () => fire(task)));
      } catch (err) {
        throw new ScheduleError(`surfaces.scheduled[${task.id}].cron: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
  } catch (err) {
    for (const j of jobs) j.stop();
    throw err;
  }
  return () => {
    for (const j of jobs) j.stop();
  };
}
