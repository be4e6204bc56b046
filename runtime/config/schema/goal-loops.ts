import { z } from 'zod';

/** A goal's budget over all of its iterations; each unset limit is not capped at the goal level. */
const GoalBudget = z.strictObject({
  modelCalls: z
    .int()
    .positive()
    .optional()
    .describe(
      'Most model calls all iterations of the goal may make together (each run is capped to what is left).',
    ),
  toolCalls: z
    .int()
    .positive()
    .optional()
    .describe(
      'Most tool calls all iterations of the goal may make together (each run is capped to what is left).',
    ),
  wallTimeMs: z
    .int()
    .positive()
    .optional()
    .describe(
      'Longest the iterations of the goal may run together, in ms (time spent paused or between iterations does not count).',
    ),
  tokens: z
    .int()
    .positive()
    .optional()
    .describe(
      'Most tokens (input and output together) all iterations of the goal may use together: each run starts with at most what is left; a run that would go past it parks on an Inbox item of kind "budget" (approving extends that run once; denying ends the goal "budget_limited").',
    ),
  costUsd: z
    .number()
    .positive()
    .optional()
    .describe(
      "Most all iterations of the goal may cost together, in US dollars, by the model's price; a breach parks like `tokens`.",
    ),
});

/** One goal loop (`surfaces.goalLoops[]`): an objective an agent works on, one unattended run per iteration. */
export const GoalLoop = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .describe(
      'A stable name of this goal (letters, digits, ".", "_" and "-"; at most 64), e.g. "fix-tests".',
    ),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that works on the goal.'),
  objective: z
    .string()
    .min(1)
    .max(20_000)
    .describe(
      'What the agent should achieve; each iteration starts a run with this objective as its message.',
    ),
  maxIterations: z
    .int()
    .positive()
    .max(10_000)
    .default(10)
    .describe('Most iterations (runs) before the goal stops as "budget_limited" (default 10).'),
  budget: GoalBudget.optional().describe(
    'Limits over all iterations together; when model calls, tool calls or wall time are used up the goal stops as "budget_limited"; tokens and cost park the run that would go past them for a human.',
  ),
});

/** One goal loop of the config, defaults applied. */
export type GoalLoopConfig = z.infer<typeof GoalLoop>;
