import type { Decision } from '../../policy/decision.ts';
import type { Interaction } from '../../policy/risk.ts';

/** A tool call the model proposed. `id` is unique within its run. */
export interface ProposedCall {
  readonly id: string;
  readonly tool: string;
  readonly args: unknown;
  /**
   * Set when the store's redaction would alter `args` (a secret or a `password=…` inside them):
   * the run's stored snapshot then holds other arguments than the model wrote, and a run
   * restored from it does not execute the call (set by the model step, never by the model).
   */
  readonly argsRedactedAtRest?: true;
  /**
   * How often the model's own `args` hold the redactor's censor text (absent: never). A restored
   * call whose args hold it more often was redacted at rest after all, and is not executed.
   */
  readonly argsCensorCount?: number;
}

/** What one model step returns: tool calls to make, or the final answer. */
export type ModelStepOutput = (
  | { readonly kind: 'calls'; readonly calls: readonly ProposedCall[]; readonly text?: string }
  | { readonly kind: 'final'; readonly text: string }
) & {
  /** The tokens the provider says the step used, when it says so. */
  readonly usage?: ModelUsage;
  /** The model the provider's server says answered (never the requested one filled in). */
  readonly responseModel?: string;
};

/** Tokens of one model call (or, summed, of a run's calls), as the provider counted them. */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** What the call cost in US dollars, when the model has a price in config. */
  readonly costUsd?: number;
}

/**
 * What the model sees after a call. `tool.denied` carries the reason code and a message without
 * secrets; `tool.interrupted` reports a call cut by a crash that was not retried.
 */
export type Observation =
  | {
      readonly kind: 'tool.result';
      readonly callId: string;
      readonly tool: string;
      readonly content: unknown;
      /** What a sub-agent spent: it is carved out of this run's budget (its tokens and cost too). */
      readonly usage?: {
        readonly modelCalls: number;
        readonly toolCalls: number;
        readonly tokens?: ModelUsage;
      };
    }
  | {
      readonly kind: 'tool.denied';
      readonly callId: string;
      readonly tool: string;
      readonly reason: string;
      readonly message: string;
    }
  | { readonly kind: 'tool.failed'; readonly callId: string; readonly tool: string; readonly message: string }
  | {
      readonly kind: 'tool.interrupted';
      readonly callId: string;
      readonly tool: string;
      readonly message: string;
    };

/** One entry of a run's transcript, as the model is shown it. */
export type TranscriptEntry =
  | { readonly role: 'user'; readonly text: string }
  | { readonly role: 'assistant'; readonly text?: string; readonly calls?: readonly ProposedCall[] }
  | { readonly role: 'observation'; readonly observation: Observation };

/**
 * Budgets of the authority model: model calls, tool calls and wall time; tokens (input and
 * output together) and cost in US dollars when set (absent: no limit).
 */
export interface Budget {
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly wallTimeMs: number;
  readonly tokens?: number;
  readonly costUsd?: number;
}

/** One dimension of a budget. */
export type BudgetDimension = 'modelCalls' | 'toolCalls' | 'tokens' | 'costUsd' | 'wallTimeMs';

/**
 * A run's request for more budget (an Inbox item of kind `budget`): the dimension it would go
 * past, what it used and its limit then, and how much approving it grants, once.
 */
export interface BudgetRequest {
  readonly dimension: BudgetDimension;
  readonly used: number;
  readonly limit: number;
  readonly grant: number;
}

/** How a run ended. */
export interface RunOutcome {
  readonly status: 'completed' | 'failed' | 'denied';
  readonly reason: string;
  readonly text?: string;
  /** Why a failed step failed, for the user (e.g. the model server's HTTP status and what to check); redacted. */
  readonly message?: string;
}

/** The input a run starts from. */
export interface RunInput {
  readonly runId: string;
  readonly agentId: string;
  readonly sessionId: string;
  readonly taskId: string | null;
  readonly parentRunId: string | null;
  /** The agent of the parent run, for approvals raised by a sub-agent. */
  readonly parentAgentId?: string | null;
  /** A sub-agent's own (narrowed) authority; null for a top-level run, which uses its agent's config. */
  readonly authority?: unknown;
  readonly surface: string;
  readonly interaction: Interaction;
  readonly message: string;
  /**
   * How many entries of its session's transcript come before this run's own (the session's
   * history the model sees first); absent for a run outside a durable conversation. Fixed at
   * the run's start, so a resumed run sends the same history.
   */
  readonly historyUpTo?: number;
  readonly budget: Budget;
  /**
   * What approving a budget request of a dimension grants, when not the run's own starting
   * budget of it (a run whose tokens or cost were cut to what its session has left).
   */
  readonly grants?: Partial<Record<BudgetDimension, number>>;
  /**
   * What a budget breach does: `ask` parks the run on an Inbox item of kind `budget` (attended:
   * asked inline) until a human extends the budget or declines; `fail` (the default, and a goal's
   * or a sub-agent's run) ends the run failed with the budget's reason code at once.
   */
  readonly onBudget?: 'ask' | 'fail';
  /**
   * Dimensions whose breach parks the run like `onBudget: 'ask'` even when its other breaches
   * fail it: a goal iteration's tokens and cost when its goal limits them (the goal's budget
   * parks like a session's; its model calls, tool calls and wall time still end the run).
   */
  readonly askFor?: readonly BudgetDimension[];
  /** Milliseconds since the epoch when the run started (injected clock). */
  readonly startedAt: number;
}

/** The persisted context of a run: everything needed to resume it after a restart. */
export interface RunContext extends RunInput {
  readonly transcript: readonly TranscriptEntry[];
  readonly calls: readonly ProposedCall[];
  readonly cursor: number;
  readonly decision: Decision | null;
  readonly approvalId: string | null;
  /** Budget spent, including what sub-agents spent for this run. */
  readonly used: { readonly modelCalls: number; readonly toolCalls: number };
  /** Tokens of this run's own model calls, summed (absent in runs stored before it was kept). */
  readonly tokens?: ModelUsage;
  /** The open budget request while the run waits on one (`waiting_for_budget`), else absent or null. */
  readonly budgetRequest?: BudgetRequest | null;
  /** How much each dimension was extended by approved budget requests (absent: never). */
  readonly granted?: Partial<Record<BudgetDimension, number>>;
  /** How many budget requests this run opened (the next one's id is derived from it). */
  readonly budgetAsks?: number;
  /** The wall-time deadline passed while the run could not park (a call in flight): it parks next. */
  readonly overtime?: boolean;
  /** This run's own model steps so far: the index of its next step. */
  readonly steps: number;
  /** How often each distinct denied call (tool + arguments) was proposed. */
  readonly denials: Readonly<Record<string, number>>;
  readonly outcome: RunOutcome | null;
}

/** Events a run accepts from outside. */
export type RunEvent =
  | {
      readonly type: 'APPROVAL_DECIDED';
      readonly approvalId: string;
      readonly decision: 'approved' | 'denied' | 'expired';
      readonly user: string | null;
      /**
       * The human's reason (redacted). A denial with a reason goes back to the model as its
       * `tool.denied` observation and the run continues; a denial without one ends the run.
       */
      readonly reason?: string | null;
      /** When the decision was made (ms): a wall-time grant counts from it. */
      readonly decidedAt?: number | null;
    }
  | { readonly type: 'CANCEL'; readonly reason: string }
  | { readonly type: 'DEADLINE' };

/** The input of the effect that executes one approved or allowed call behind the ledger. */
export interface ExecuteInput {
  readonly runId: string;
  readonly call: ProposedCall;
  readonly decision: Decision;
  /** Stable for the call across restarts: the ledger key. */
  readonly idempotencyKey: string;
}

/** The input of the effect that records an approval request (idempotent by approval id). */
export interface OpenApprovalInput {
  readonly context: RunContext;
  readonly call: ProposedCall;
  readonly decision: Decision;
  readonly approvalId: string;
}

/** The input of the effect that records a budget request in the Inbox (idempotent by its id). */
export interface OpenBudgetInput {
  readonly context: RunContext;
  readonly request: BudgetRequest;
  readonly approvalId: string;
}

/** Audit lifecycle steps the run machine reports (DESIGN.md §3). */
export type AuditStep =
  | 'proposed'
  | 'policy_decided'
  | 'approval_requested'
  | 'approval_resolved'
  | 'run_completed'
  | 'run_failed'
  | 'run_denied';
