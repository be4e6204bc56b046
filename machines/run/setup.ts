import { assign, fromPromise, setup } from 'xstate';
import type { Decision } from '../../policy/decision.ts';
import { callSignature, current } from './calls.ts';
import {
  budgetRequestFor,
  budgetRequestIdFor,
  BUDGET_REASON,
  modelCallBreach,
  toolCallBreach,
} from './budget.ts';
import { failureMessage } from './failure.ts';
import type {
  AuditStep,
  ExecuteInput,
  ModelStepOutput,
  Observation,
  OpenApprovalInput,
  OpenBudgetInput,
  ProposedCall,
  RunContext,
  RunEvent,
  RunInput,
  RunOutcome,
  BudgetDimension,
} from './types.ts';

/** A denied call proposed this many times stops the run before its budget runs out. */
export const MAX_SAME_DENIAL = 2;

/** Placeholder for an effect the runtime must provide; failing loudly if it did not. */
function unprovided<TOut, TIn>(name: string) {
  return fromPromise<TOut, TIn>(async () => {
    throw new Error(`run machine: effect "${name}" was not provided (use machine.provide)`);
  });
}

/** The approval id of a call: stable across restarts so re-opening it is idempotent. */
export function approvalIdFor(runId: string, callId: string): string {
  return `apr:${runId}:${callId}`;
}

/** The ledger key of a call: stable across restarts. */
export function idempotencyKeyFor(runId: string, callId: string): string {
  return `call:${runId}:${callId}`;
}

/**
 * The run machine's setup: every effect it names (provided by `actors/run`), its guards as named
 * predicates and its actions. The state chart itself is in `machine.ts`.
 */
export const runSetup = setup({
  types: {
    context: {} as RunContext,
    events: {} as RunEvent,
    input: {} as RunInput,
    output: {} as RunOutcome,
  },
  actors: {
    modelStep: unprovided<ModelStepOutput, { context: RunContext }>('modelStep'),
    decide: unprovided<Decision, { context: RunContext; call: ProposedCall }>('decide'),
    openApproval: unprovided<{ approvalId: string }, OpenApprovalInput>('openApproval'),
    executeTool: unprovided<Observation, ExecuteInput>('executeTool'),
    /** Records a budget request in the Inbox (kind `budget`), idempotent by its id. */
    openBudgetRequest: unprovided<{ approvalId: string }, OpenBudgetInput>('openBudgetRequest'),
    /**
     * Records the run with the model's answer before any call it proposes is evaluated (the run
     * host persists the snapshot here). Pure uses of the machine need nothing: it does nothing.
     */
    recordStep: fromPromise<void, { context: RunContext }>(async () => {}),
  },
  actions: {
    audit: (_, _params: { step: AuditStep }) => {},
    /** An observation was just appended to the transcript (feeds `tool.completed` / `tool.denied`). */
    observed: () => {},
    finish: assign(({ context, event }, params: { status: RunOutcome['status']; reason: string }) => ({
      outcome: {
        status: params.status,
        reason: params.reason,
        message: failureMessage(params.reason, context, (event as { error?: unknown }).error),
      },
    })),
    /** The run goes past a budget and ends failed with its reason code. */
    finishBudget: assign(({ context }, params: { dimension: BudgetDimension | null }) => {
      const reason = BUDGET_REASON[params.dimension ?? 'wallTimeMs'];
      return {
        outcome: { status: 'failed' as const, reason, message: failureMessage(reason, context, undefined) },
      };
    }),
    /** The run parks on a request for more of `dimension` (its Inbox item is opened on entry). */
    askBudget: assign(({ context }, params: { dimension: BudgetDimension | null }) => {
      const n = context.budgetAsks ?? 0;
      return {
        budgetRequest: budgetRequestFor(context, params.dimension ?? 'wallTimeMs'),
        approvalId: budgetRequestIdFor(context.runId, n),
        budgetAsks: n + 1,
      };
    }),
  },
  guards: {
    modelBudgetLeft: ({ context }) => modelCallBreach(context) === null,
    toolBudgetLeft: ({ context }) => toolCallBreach(context) === null,
    /**
     * A breach of `dimension` parks this run for a human (attended: asked inline) instead of
     * ending it: every breach of an `ask` run, and the dimensions of its `askFor`.
     */
    asksForBudget: ({ context }, params: { dimension: BudgetDimension | null }) =>
      context.onBudget === 'ask' ||
      (params.dimension !== null && context.askFor?.includes(params.dimension) === true),
    isFinal: (_, params: { output: ModelStepOutput }) => params.output.kind === 'final',
    isAllowed: (_, params: { decision: Decision }) => params.decision.decision === 'allow',
    isDenied: (_, params: { decision: Decision }) => params.decision.decision === 'deny',
    deniedTooOften: ({ context }) =>
      (context.denials[callSignature(current(context))] ?? 0) + 1 >= MAX_SAME_DENIAL,
    moreCalls: ({ context }) => context.cursor + 1 < context.calls.length,
    isThisApproval: ({ context, event }) =>
      event.type === 'APPROVAL_DECIDED' && event.approvalId === context.approvalId,
    approved: ({ event }) => event.type === 'APPROVAL_DECIDED' && event.decision === 'approved',
    deniedWithReason: ({ context, event }) =>
      event.type === 'APPROVAL_DECIDED' &&
      event.approvalId === context.approvalId &&
      event.decision === 'denied' &&
      typeof event.reason === 'string' &&
      event.reason.length > 0,
  },
});
