import type { GoalRecord, Runtime } from '../../runtime/index.ts';

/** A goal start the runtime refused (unknown goal, already active or paused). */
export class GoalStartRefusedError extends Error {
  readonly code = 'goal_start_refused';
}

const STOPPED = new Set(['complete', 'budget_limited', 'failed', 'cancelled']);

/**
 * The Goal Loop surface's entry: starts a configured goal as the human `by` (through the
 * runtime's control path, like `snotra goal start`) and resolves with its record once it has
 * stopped (`complete`, `budget_limited`, `failed` or `cancelled`). While it waits, a parked
 * iteration stays parked: this entry decides nothing.
 */
export function runGoal(runtime: Runtime, goalId: string, by: string): Promise<GoalRecord> {
  return new Promise((resolve, reject) => {
    let epoch: number | null = null;
    const off = runtime.goals.onChange((goal) => {
      if (goal.goalId !== goalId || epoch === null || goal.epoch !== epoch) return;
      if (STOPPED.has(goal.status)) {
        off();
        resolve(goal);
      }
    });
    const control = runtime.goals.control(goalId, 'start', by);
    if (control.result !== 'ok') {
      off();
      reject(new GoalStartRefusedError(`goal ${JSON.stringify(goalId)}: start refused (${control.result})`));
      return;
    }
    const now = runtime.goals.list().find((g) => g.id === goalId)?.record ?? null;
    epoch = now?.epoch ?? null;
    if (now !== null && STOPPED.has(now.status)) {
      off();
      resolve(now);
    }
  });
}
