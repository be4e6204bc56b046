/** Limits over all iterations of a goal; an absent limit is not capped at the goal level. */
export interface GoalLimits {
  readonly modelCalls?: number | undefined;
  readonly toolCalls?: number | undefined;
  readonly wallTimeMs?: number | undefined;
  /** Input and output tokens together (a breach parks the run; it does not stop the goal). */
  readonly tokens?: number | undefined;
  /** US dollars, by the model's price (a breach parks the run; it does not stop the goal). */
  readonly costUsd?: number | undefined;
}

/** What a goal or one iteration spent (tokens and cost: absent in what was stored before they were kept). */
export interface GoalSpent {
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly wallTimeMs: number;
  readonly tokens?: number | undefined;
  readonly costUsd?: number | undefined;
}

/** The input a goal machine starts from: one epoch of one goal. */
export interface GoalInput {
  readonly goalId: string;
  /** Grows each time the goal is started again; part of every iteration's identity. */
  readonly epoch: number;
  readonly agentId: string;
  readonly maxIterations: number;
  readonly budget: GoalLimits;
}

/** How an iteration's run ended, as the goal sees it. */
export interface IterationOutcome {
  readonly status: 'completed' | 'failed' | 'denied';
  readonly reason: string;
}

/** The persisted context of a goal machine. */
export interface GoalContext extends GoalInput {
  /** Iterations begun in this epoch (the current one included). */
  readonly iteration: number;
  /** The current (or last) iteration's run; null before the first. */
  readonly runId: string | null;
  /** Whether the current iteration's run has ended and been accounted (guards double billing). */
  readonly accounted: boolean;
  readonly used: GoalSpent;
  /** A human asked to pause while an iteration was in flight: it finishes, then the goal pauses. */
  readonly pauseRequested: boolean;
  /** The model's completion claim (its evidence), once made. */
  readonly evidence: string | null;
  readonly lastOutcome: IterationOutcome | null;
  readonly stopReason: string | null;
}

/** The input of the effect that records iteration `iteration` and starts its run (idempotent). */
export interface BeginIterationInput {
  readonly goalId: string;
  readonly epoch: number;
  readonly agentId: string;
  readonly iteration: number;
  /** What the goal has left (per limit; absent = not capped at the goal level). */
  readonly remaining: GoalLimits;
}

/** Events a goal machine accepts. Run events name their run: a stale one is ignored. */
export type GoalEvent =
  | { readonly type: 'RUN_PARKED'; readonly runId: string }
  | { readonly type: 'RUN_RESUMED'; readonly runId: string }
  | {
      readonly type: 'RUN_ENDED';
      readonly runId: string;
      readonly outcome: IterationOutcome;
      readonly usage: GoalSpent;
      /** Evidence recorded by `goal_complete` during the run, or null. */
      readonly claim: string | null;
    }
  | { readonly type: 'PAUSE' }
  | { readonly type: 'RESUME' }
  | { readonly type: 'CANCEL' };

/** How a goal ended (the machine's output). */
export interface GoalOutput {
  readonly stopReason: string;
}
