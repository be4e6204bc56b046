import { z } from 'zod';
import type { BuiltinTool } from './builtins.ts';

/**
 * The two tools a model gets in goal runs only (surface `goal`; the runtime withholds them from
 * every other run). Risk, decided honestly:
 *
 * - `goal_status` reads the goal's own record (objective, iteration, remaining budget): `read`.
 * - `goal_complete` records the model's *claim* that the objective is met, with its evidence,
 *   in the goal's own record; the loop then ends as `complete` when the run ends. It touches no
 *   file, process or network and cannot extend, resume or re-budget a goal — its only effect is
 *   that no further iteration starts, i.e. less activity. The risk taxonomy classifies effects
 *   outside the runtime, so it is `read` with `approvalDefault: "allow"`: an approval per claim
 *   would make unattended goals park on their own completion. Mode `deny`, agent tool lists and
 *   rules still apply to it like to every tool. Idempotent: the first claim of an iteration
 *   stands, a retried call finds it recorded.
 */
export const GOAL_TOOLS = {
  goal_status: {
    metadata: {
      risk: 'read',
      approvalDefault: 'allow',
      source: 'builtin',
      parallelSafe: true,
      idempotent: true,
    },
    args: z.strictObject({}),
  },
  goal_complete: {
    metadata: { risk: 'read', approvalDefault: 'allow', source: 'builtin', idempotent: true },
    args: z.strictObject({ evidence: z.string().min(1).max(8000) }),
  },
} as const satisfies Record<string, BuiltinTool>;

/** Names of the goal tools. */
export type GoalToolName = keyof typeof GOAL_TOOLS;

/** The goal tools' names. */
export const GOAL_TOOL_NAMES: ReadonlySet<string> = new Set(Object.keys(GOAL_TOOLS));

/** The surface name of goal iterations: the only runs that are offered the goal tools. */
export const GOAL_SURFACE = 'goal';

/**
 * The tool set of a run with the goal tools applied: a goal iteration's run (`goalRun`: surface
 * `goal`, top level — not a sub-agent of one) gets them beside its agent's tools; every other run
 * loses them (`all` is every registered tool, for agents with no list).
 */
export function withGoalTools(
  goalRun: boolean,
  granted: ReadonlySet<string> | null,
  all: readonly string[],
): ReadonlySet<string> | null {
  if (goalRun) return granted === null ? null : new Set([...granted, ...GOAL_TOOL_NAMES]);
  return new Set((granted === null ? all : [...granted]).filter((t) => !GOAL_TOOL_NAMES.has(t)));
}
