import { assign, fromPromise, setup } from 'xstate';
import type { Decision } from '../../policy/decision.ts';
import { callSignature, current, deniedObservation, observe } from './calls.ts';
import { failureMessage } from './failure.ts';
import { addUsage } from './usage.ts';
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
  TranscriptEntry,
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
 * The run machine (pure): `running → waiting_for_approval → resuming → completed | failed`, and
 * `waiting_for_approval → denied` (a denial with the human's reason instead goes back to the
 * model as its `tool.denied` observation and the run goes on). Every effect (model step, policy
 * decision, approval record, tool execution, audit) is named here and provided by `actors/`.
 * Deadlines are data (`startedAt + budget.wallTimeMs`); the runtime re-arms them and sends
 * `DEADLINE`.
 */
export const runMachine = setup({
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
}).createMachine({
  id: 'run',
  context: ({ input }) => ({
    ...input,
    transcript: [{ role: 'user', text: input.message }],
    calls: [],
    cursor: 0,
    decision: null,
    approvalId: null,
    used: { modelCalls: 0, toolCalls: 0 },
    steps: 0,
    denials: {},
    outcome: null,
  }),
  initial: 'running',
  on: {
    CANCEL: {
      target: '.failed',
      actions: assign({
        outcome: ({ event }) => ({
          status: 'failed' as const,
          reason: `cancelled: ${event.reason}`,
          message: `the run was cancelled (${event.reason})`,
        }),
      }),
    },
    DEADLINE: {
      target: '.failed',
      actions: { type: 'finish', params: { status: 'failed', reason: 'budget_wall_time' } },
    },
  },
  states: {
    running: {
      initial: 'thinking',
      states: {
        thinking: {
          always: [
            { guard: { type: 'modelBudgetLeft' }, target: 'stepping' },
            {
              target: '#run.failed',
              actions: { type: 'finish', params: { status: 'failed', reason: 'budget_model_calls' } },
            },
          ],
        },
        stepping: {
          invoke: {
            src: 'modelStep',
            input: ({ context }) => ({ context }),
            onDone: [
              {
                guard: { type: 'isFinal', params: ({ event }) => ({ output: event.output }) },
                target: '#run.completed',
                actions: assign(({ context, event }) => {
                  const text = event.output.kind === 'final' ? event.output.text : '';
                  return {
                    used: { ...context.used, modelCalls: context.used.modelCalls + 1 },
                    tokens: addUsage(context.tokens, event.output.usage),
                    steps: context.steps + 1,
                    transcript: [...context.transcript, { role: 'assistant' as const, text }],
                    outcome: { status: 'completed' as const, reason: 'final_answer', text },
                  };
                }),
              },
              {
                target: 'recording',
                actions: assign(({ context, event }) => {
                  const calls = event.output.kind === 'calls' ? event.output.calls : [];
                  const entry: TranscriptEntry =
                    event.output.kind === 'calls' && event.output.text !== undefined
                      ? { role: 'assistant', text: event.output.text, calls }
                      : { role: 'assistant', calls };
                  return {
                    used: { ...context.used, modelCalls: context.used.modelCalls + 1 },
                    tokens: addUsage(context.tokens, event.output.usage),
                    steps: context.steps + 1,
                    transcript: [...context.transcript, entry],
                    calls,
                    cursor: 0,
                  };
                }),
              },
            ],
            onError: {
              target: '#run.failed',
              actions: { type: 'finish', params: { status: 'failed', reason: 'model_error' } },
            },
          },
        },
        recording: {
          // The answer is durable before its calls are audited, evaluated or run: a restart never
          // asks the model again for a step it answered (a re-asked step could propose other calls).
          invoke: {
            src: 'recordStep',
            input: ({ context }) => ({ context }),
            onDone: { target: 'acting' },
            onError: {
              target: '#run.failed',
              actions: { type: 'finish', params: { status: 'failed', reason: 'store_error' } },
            },
          },
        },
        acting: {
          initial: 'checking',
          states: {
            checking: {
              always: [
                { guard: ({ context }) => context.calls.length === 0, target: '#run.running.thinking' },
                { guard: { type: 'toolBudgetLeft' }, target: 'deciding' },
                {
                  target: '#run.failed',
                  actions: { type: 'finish', params: { status: 'failed', reason: 'budget_tool_calls' } },
                },
              ],
            },
            deciding: {
              entry: { type: 'audit', params: { step: 'proposed' } },
              invoke: {
                src: 'decide',
                input: ({ context }) => ({ context, call: current(context) }),
                onDone: [
                  {
                    guard: { type: 'isAllowed', params: ({ event }) => ({ decision: event.output }) },
                    target: 'executing',
                    actions: [
                      assign({ decision: ({ event }) => event.output }),
                      { type: 'audit', params: { step: 'policy_decided' } },
                    ],
                  },
                  {
                    guard: { type: 'isDenied', params: ({ event }) => ({ decision: event.output }) },
                    target: 'denied',
                    actions: [
                      assign({ decision: ({ event }) => event.output }),
                      { type: 'audit', params: { step: 'policy_decided' } },
                    ],
                  },
                  {
                    target: '#run.waiting_for_approval',
                    actions: [
                      assign({
                        decision: ({ event }) => event.output,
                        approvalId: ({ context }) => approvalIdFor(context.runId, current(context).id),
                      }),
                      { type: 'audit', params: { step: 'policy_decided' } },
                    ],
                  },
                ],
                onError: {
                  target: '#run.failed',
                  actions: { type: 'finish', params: { status: 'failed', reason: 'policy_error' } },
                },
              },
            },
            denied: {
              always: [
                {
                  guard: { type: 'deniedTooOften' },
                  target: '#run.failed',
                  actions: [
                    assign(({ context }) => ({
                      used: { ...context.used, toolCalls: context.used.toolCalls + 1 },
                      transcript: observe(
                        context,
                        deniedObservation(current(context), context.decision ?? { reason: 'mode_deny' }),
                      ),
                    })),
                    'observed',
                    { type: 'finish', params: { status: 'failed', reason: 'repeated_denied_call' } },
                  ],
                },
                {
                  target: 'advance',
                  actions: [
                    assign(({ context }) => {
                      const sig = callSignature(current(context));
                      return {
                        used: { ...context.used, toolCalls: context.used.toolCalls + 1 },
                        denials: { ...context.denials, [sig]: (context.denials[sig] ?? 0) + 1 },
                        transcript: observe(
                          context,
                          deniedObservation(current(context), context.decision ?? { reason: 'mode_deny' }),
                        ),
                      };
                    }),
                    'observed',
                  ],
                },
              ],
            },
            executing: {
              invoke: {
                src: 'executeTool',
                input: ({ context }) => {
                  const call = current(context);
                  if (context.decision === null)
                    throw new Error(`run ${context.runId}: executing without a decision`);
                  return {
                    runId: context.runId,
                    call,
                    decision: context.decision,
                    idempotencyKey: idempotencyKeyFor(context.runId, call.id),
                  };
                },
                onDone: {
                  target: 'advance',
                  actions: [
                    assign(({ context, event }) => {
                      const usage = event.output.kind === 'tool.result' ? event.output.usage : undefined;
                      return {
                        used: {
                          modelCalls: context.used.modelCalls + (usage?.modelCalls ?? 0),
                          toolCalls: context.used.toolCalls + 1 + (usage?.toolCalls ?? 0),
                        },
                        transcript: observe(context, event.output),
                      };
                    }),
                    'observed',
                  ],
                },
                onError: {
                  target: 'advance',
                  actions: [
                    assign(({ context }) => {
                      const call = current(context);
                      return {
                        used: { ...context.used, toolCalls: context.used.toolCalls + 1 },
                        transcript: observe(context, {
                          kind: 'tool.failed',
                          callId: call.id,
                          tool: call.tool,
                          message: 'the tool failed',
                        }),
                      };
                    }),
                    'observed',
                  ],
                },
              },
            },
            advance: {
              always: [
                {
                  guard: { type: 'moreCalls' },
                  target: 'checking',
                  actions: assign({
                    cursor: ({ context }) => context.cursor + 1,
                    decision: null,
                    approvalId: null,
                  }),
                },
                {
                  target: '#run.running.thinking',
                  actions: assign({ calls: [], cursor: 0, decision: null, approvalId: null }),
                },
              ],
            },
          },
        },
      },
    },
    waiting_for_approval: {
      entry: { type: 'audit', params: { step: 'approval_requested' } },
      invoke: {
        src: 'openApproval',
        input: ({ context }) => {
          if (context.decision === null || context.approvalId === null)
            throw new Error(`run ${context.runId}: approval without a decision`);
          return {
            context,
            call: current(context),
            decision: context.decision,
            approvalId: context.approvalId,
          };
        },
        onError: {
          target: 'failed',
          actions: { type: 'finish', params: { status: 'failed', reason: 'approval_store_error' } },
        },
      },
      on: {
        APPROVAL_DECIDED: [
          {
            guard: ({ context, event }) =>
              event.approvalId === context.approvalId && event.decision === 'approved',
            target: 'resuming',
            actions: { type: 'audit', params: { step: 'approval_resolved' } },
          },
          {
            // The human said why: the model sees the reason and may try something else.
            guard: { type: 'deniedWithReason' },
            target: '#run.running.acting.advance',
            actions: [
              { type: 'audit', params: { step: 'approval_resolved' } },
              assign(({ context, event }) => {
                const call = current(context);
                const sig = callSignature(call);
                const reason = event.type === 'APPROVAL_DECIDED' ? (event.reason ?? '') : '';
                return {
                  used: { ...context.used, toolCalls: context.used.toolCalls + 1 },
                  denials: { ...context.denials, [sig]: (context.denials[sig] ?? 0) + 1 },
                  transcript: observe(
                    context,
                    deniedObservation(
                      call,
                      { reason: 'approval_denied' },
                      `a human denied this call: ${reason}`,
                    ),
                  ),
                };
              }),
              'observed',
            ],
          },
          {
            guard: { type: 'isThisApproval' },
            target: 'denied',
            actions: [
              { type: 'audit', params: { step: 'approval_resolved' } },
              assign(({ context, event }) => {
                const call = current(context);
                const decision = event.type === 'APPROVAL_DECIDED' ? event.decision : 'denied';
                const message =
                  decision === 'expired'
                    ? 'the approval request expired without a decision'
                    : 'a human denied this call';
                return {
                  transcript: observe(
                    context,
                    deniedObservation(call, { reason: `approval_${decision}` }, message),
                  ),
                  outcome: { status: 'denied' as const, reason: `approval_${decision}` },
                };
              }),
              'observed',
            ],
          },
        ],
      },
    },
    resuming: {
      always: { target: '#run.running.acting.executing' },
    },
    completed: { type: 'final', entry: { type: 'audit', params: { step: 'run_completed' } } },
    failed: { type: 'final', entry: { type: 'audit', params: { step: 'run_failed' } } },
    denied: { type: 'final', entry: { type: 'audit', params: { step: 'run_denied' } } },
  },
  output: ({ context }) => context.outcome ?? { status: 'failed', reason: 'no_outcome' },
});
