import { addUsage } from '../../machines/run/usage.ts';
import type { ModelUsage, RunContext } from '../../machines/run/types.ts';

/**
 * The tokens (and cost) of a session: the usage of each of its runs summed (a run's own usage
 * already holds what its sub-agents spent), plus `compactions`, what its compactions' summarizing
 * model calls used (a compaction runs outside any run: it counts for the session only). Null
 * when nothing reported any (a scripted model, runs stored before usage was kept).
 */
export function sessionUsage(
  runIds: readonly string[],
  contextOf: (runId: string) => RunContext | null,
  compactions: ModelUsage | null = null,
): ModelUsage | null {
  let sum: ModelUsage | undefined = compactions ?? undefined;
  for (const runId of runIds) sum = addUsage(sum, contextOf(runId)?.tokens);
  return sum ?? null;
}
