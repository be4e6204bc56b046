import type { GoalStatusView } from '../../actors/tools/goal.ts';
import { remainingOf } from '../../machines/goal/machine.ts';
import type { GoalSpent } from '../../machines/goal/types.ts';
import { tokensOf } from '../../machines/run/budget.ts';
import type { RunContext } from '../../machines/run/types.ts';
import type { Store } from '../../store/index.ts';

/**
 * What `goal_status` shows a run: its goal's objective, the iteration, and what is left of each
 * budget limit counting what this run has spent so far (tokens and cost only when the goal limits
 * them). Null when the run is not an iteration of the goal's current epoch. Read-only.
 */
export function goalStatusView(
  store: Store,
  runId: string,
  run: Pick<RunContext, 'used' | 'startedAt' | 'tokens'> | null,
  now: number,
): GoalStatusView | null {
  const it = store.goals.iterationOfRun(runId);
  if (it === null) return null;
  const goal = store.goals.get(it.goalId);
  if (goal === null || goal.epoch !== it.epoch) return null;
  const spent: GoalSpent = {
    modelCalls: goal.used.modelCalls + (run?.used.modelCalls ?? 0),
    toolCalls: goal.used.toolCalls + (run?.used.toolCalls ?? 0),
    wallTimeMs: goal.used.wallTimeMs + (run === null ? 0 : Math.max(0, now - run.startedAt)),
    tokens: (goal.used.tokens ?? 0) + tokensOf(run?.tokens),
    costUsd: (goal.used.costUsd ?? 0) + (run?.tokens?.costUsd ?? 0),
  };
  const left = remainingOf(goal.budget, spent);
  return {
    goalId: goal.goalId,
    objective: goal.objective,
    iteration: it.iteration,
    maxIterations: goal.maxIterations,
    remaining: {
      modelCalls: left.modelCalls ?? null,
      toolCalls: left.toolCalls ?? null,
      wallTimeMs: left.wallTimeMs ?? null,
      ...(left.tokens === undefined ? {} : { tokens: left.tokens }),
      ...(left.costUsd === undefined ? {} : { costUsd: left.costUsd }),
    },
  };
}
