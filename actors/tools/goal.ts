import type { ToolExecutor } from './types.ts';
import { ToolError } from './types.ts';

/** What `goal_status` shows the model: its goal, the iteration, and what is left of the budget. */
export interface GoalStatusView {
  readonly goalId: string;
  readonly objective: string;
  readonly iteration: number;
  readonly maxIterations: number;
  /** Per limit the goal sets: what is left, counting this run's spending so far; null = no goal limit. */
  readonly remaining: {
    readonly modelCalls: number | null;
    readonly toolCalls: number | null;
    readonly wallTimeMs: number | null;
    /** Tokens (input and output) left: present only when the goal has a tokens budget. */
    readonly tokens?: number;
    /** US dollars left: present only when the goal has a costUsd budget. */
    readonly costUsd?: number;
  };
}

/** Why a claim was not recorded, as the goal store says. */
export type GoalClaimOutcome =
  | { readonly ok: true; readonly goalId: string; readonly iteration: number }
  | { readonly ok: false; readonly reason: string };

/** What the goal tools need from the runtime: the goal a run belongs to, and the claim. */
export interface GoalToolPort {
  /** The goal of a run that is a goal iteration, or null. */
  status(runId: string): GoalStatusView | null;
  /** Records a completion claim for the iteration `runId` belongs to. */
  claim(runId: string, evidence: string): GoalClaimOutcome;
}

const REFUSAL_TEXT: Readonly<Record<string, string>> = {
  not_a_goal_run: 'this run is not an iteration of a goal',
  stale_iteration: 'this iteration belongs to an earlier start of the goal',
  goal_not_active: 'the goal is no longer active',
  iteration_ended: 'this iteration has already ended',
};

/**
 * The executors of `goal_status` (read-only) and `goal_complete` (records the model's claim; the
 * loop ends as `complete` when the run ends). Both refuse, with a code, in a run that is not a
 * live iteration of an active goal.
 */
export function createGoalExecutors(
  port: GoalToolPort,
): Record<'goal_status' | 'goal_complete', ToolExecutor> {
  return {
    goal_status: {
      async execute(_args, ctx) {
        const view = port.status(ctx.runId);
        if (view === null) throw new ToolError('not_a_goal_run', REFUSAL_TEXT.not_a_goal_run as string);
        return view;
      },
    },
    goal_complete: {
      async execute(args, ctx) {
        const evidence = args.evidence;
        if (typeof evidence !== 'string' || evidence.length === 0)
          throw new ToolError('invalid_arguments', 'goal_complete needs the evidence that the goal is met');
        const result = port.claim(ctx.runId, evidence);
        if (!result.ok) throw new ToolError(result.reason, REFUSAL_TEXT[result.reason] ?? result.reason);
        return {
          recorded: true,
          goalId: result.goalId,
          iteration: result.iteration,
          note: 'completion claimed: the goal ends when this run ends. Finish with a short final answer.',
        };
      },
    },
  };
}
