import { assign, fromPromise, setup } from 'xstate';
import type { Decision } from '../../policy/decision.ts';
import { callSignature, current } from './calls.ts';
import { failureMessage } from './failure.ts';
import type {
  AuditStep,
  ExecuteInput,
  ModelStepOutput,
  Observation,
  OpenApprovalInput,
  ProposedCall,
  RunContext,
  RunEvent,
  RunInput,
  RunOutcome,
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
  },
  guards: {
    modelBudgetLeft: ({ context }) => context.used.modelCalls < context.budget.modelCalls,
    toolBudgetLeft: ({ context }) => context.used.toolCalls < context.budget.toolCalls,
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
