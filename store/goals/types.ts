/** A goal's lifecycle status (durable). `active` covers running, between iterations and parked. */
export const GOAL_STATUSES = [
  'active',
  'paused',
  'complete',
  'budget_limited',
  'failed',
  'cancelled',
] as const;
export type GoalStatus = (typeof GOAL_STATUSES)[number];

/** Statuses after which the goal never runs again in its epoch (a `start` opens a new epoch). */
export const FINAL_GOAL_STATUSES: ReadonlySet<GoalStatus> = new Set([
  'complete',
  'budget_limited',
  'failed',
  'cancelled',
]);

/** Limits over all iterations of a goal; an absent limit is not capped at the goal level. */
export interface GoalBudget {
  readonly modelCalls?: number | undefined;
  readonly toolCalls?: number | undefined;
  readonly wallTimeMs?: number | undefined;
  readonly tokens?: number | undefined;
  readonly costUsd?: number | undefined;
}

/**
 * What a goal (or one iteration) spent. Tokens (input and output together) and cost (US
 * dollars, by the model's price) since schema version 18; absent when nothing was known.
 */
export interface GoalUsage {
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly wallTimeMs: number;
  readonly tokens?: number | undefined;
  readonly costUsd?: number | undefined;
}

/** One goal as stored: the current epoch's state. */
export interface GoalRecord {
  readonly goalId: string;
  /** Grows by one each time a finished goal is started again; guards every state write. */
  readonly epoch: number;
  readonly agentId: string;
  readonly objective: string;
  readonly status: GoalStatus;
  /** Why a goal stopped (`goal_complete`, `budget_model_calls`, `max_iterations`, …); null while it goes on. */
  readonly stopReason: string | null;
  /** Whether the current iteration's run waits for a human (the goal stays `active`). */
  readonly parked: boolean;
  /** Iterations begun in this epoch (the current one included). */
  readonly iteration: number;
  readonly maxIterations: number;
  readonly budget: GoalBudget;
  readonly used: GoalUsage;
  /** The evidence the model gave when it claimed completion (redacted); null otherwise. */
  readonly evidence: string | null;
  readonly startedAt: number;
  readonly updatedAt: number;
}

/** The budget one iteration's run was given (what the goal had left, within the agent's run limits). */
export interface IterationBudget {
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly wallTimeMs: number;
  /** Tokens and cost: the agent's own run limit cut to what the goal has left (absent: no limit). */
  readonly tokens?: number | undefined;
  readonly costUsd?: number | undefined;
  /**
   * What approving the run's request for more tokens or cost grants (the agent's run limit, or
   * the goal's whole limit when the agent has none); present for the limits the goal sets, whose
   * breach parks the run.
   */
  readonly grants?: { readonly tokens?: number | undefined; readonly costUsd?: number | undefined };
}

/** One iteration of a goal: identity goal id + epoch + iteration number. */
export interface IterationRecord {
  readonly goalId: string;
  readonly epoch: number;
  readonly iteration: number;
  /** Deterministic from the identity; recorded before the run starts. */
  readonly runId: string;
  readonly budget: IterationBudget;
  readonly status: 'started' | 'ended';
  /** The run's outcome (`completed`, `failed: budget_tool_calls`, …) once ended. */
  readonly outcome: string | null;
  readonly usage: GoalUsage | null;
  /** Evidence of a completion claimed by `goal_complete` in this iteration (redacted). */
  readonly claim: string | null;
  readonly startedAt: number;
  readonly endedAt: number | null;
}

/** What a human may ask of a goal. */
export const GOAL_ACTIONS = ['start', 'pause', 'resume', 'cancel'] as const;
export type GoalAction = (typeof GOAL_ACTIONS)[number];

/** A human's request, kept until the runtime applies it (at once when running, else at its next start). */
export interface GoalControl {
  readonly seq: number;
  readonly goalId: string;
  readonly action: GoalAction;
  readonly requestedBy: string;
  readonly requestedAt: number;
  readonly appliedAt: number | null;
  /** `ok`, or why the request changed nothing (`not_active`, `unknown_goal`, …). */
  readonly result: string | null;
}

/** Why `goal_complete` could not record a claim. */
export type ClaimRefusal = 'not_a_goal_run' | 'stale_iteration' | 'goal_not_active' | 'iteration_ended';

/** The result of `GoalStore.claim`. */
export type ClaimResult =
  | { readonly ok: true; readonly goalId: string; readonly epoch: number; readonly iteration: number }
  | { readonly ok: false; readonly reason: ClaimRefusal };
