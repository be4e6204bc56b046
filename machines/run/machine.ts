import { assign } from 'xstate';
import { callSignature, current, deniedObservation, observe } from './calls.ts';
import { addUsage } from './usage.ts';
import { waitingForApproval } from './approval-state.ts';
import { modelCallBreach, toolCallBreach } from './budget.ts';
import { waitingForBudget } from './budget-state.ts';
import { approvalIdFor, idempotencyKeyFor, runSetup } from './setup.ts';
import type { TranscriptEntry } from './types.ts';

export { approvalIdFor, idempotencyKeyFor, MAX_SAME_DENIAL } from './setup.ts';

/**
 * The run machine (pure): `running → waiting_for_approval → resuming → completed | failed`, and
 * `waiting_for_approval → denied` (a denial with the human's reason instead goes back to the
 * model as its `tool.denied` observation and the run goes on). Every effect (model step, policy
 * decision, approval record, tool execution, audit) is named here and provided by `actors/`.
 * Deadlines are data (`startedAt + budget.wallTimeMs`); the runtime re-arms them and sends
 * `DEADLINE`.
 */
export const runMachine = runSetup.createMachine({
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
    // A run that may park is not cut in the middle of a call: it parks at its next step.
    DEADLINE: [
      {
        guard: { type: 'asksForBudget', params: { dimension: 'wallTimeMs' } },
        actions: assign({ overtime: true }),
      },
      {
        target: '.failed',
        actions: { type: 'finish', params: { status: 'failed', reason: 'budget_wall_time' } },
      },
    ],
  },
  states: {
    running: {
      initial: 'thinking',
      states: {
        thinking: {
          always: [
            { guard: { type: 'modelBudgetLeft' }, target: 'stepping' },
            {
              guard: {
                type: 'asksForBudget',
                params: ({ context }) => ({ dimension: modelCallBreach(context) }),
              },
              target: '#run.waiting_for_budget',
              actions: {
                type: 'askBudget',
                params: ({ context }) => ({ dimension: modelCallBreach(context) }),
              },
            },
            {
              target: '#run.failed',
              actions: {
                type: 'finishBudget',
                params: ({ context }) => ({ dimension: modelCallBreach(context) }),
              },
            },
          ],
        },
        stepping: {
          // The model call in flight is dropped (its answer would come after the deadline).
          on: {
            DEADLINE: [
              {
                guard: { type: 'asksForBudget', params: { dimension: 'wallTimeMs' } },
                target: '#run.waiting_for_budget',
                actions: { type: 'askBudget', params: { dimension: 'wallTimeMs' } },
              },
              {
                target: '#run.failed',
                actions: { type: 'finish', params: { status: 'failed', reason: 'budget_wall_time' } },
              },
            ],
          },
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
                  guard: {
                    type: 'asksForBudget',
                    params: ({ context }) => ({ dimension: toolCallBreach(context) }),
                  },
                  target: '#run.waiting_for_budget',
                  actions: {
                    type: 'askBudget',
                    params: ({ context }) => ({ dimension: toolCallBreach(context) }),
                  },
                },
                {
                  target: '#run.failed',
                  actions: {
                    type: 'finishBudget',
                    params: ({ context }) => ({ dimension: toolCallBreach(context) }),
                  },
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
                        tokens: addUsage(context.tokens, usage?.tokens),
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
    waiting_for_approval: waitingForApproval,
    waiting_for_budget: waitingForBudget,
    resuming: {
      always: { target: '#run.running.acting.executing' },
    },
    completed: { type: 'final', entry: { type: 'audit', params: { step: 'run_completed' } } },
    failed: { type: 'final', entry: { type: 'audit', params: { step: 'run_failed' } } },
    denied: { type: 'final', entry: { type: 'audit', params: { step: 'run_denied' } } },
  },
  output: ({ context }) => context.outcome ?? { status: 'failed', reason: 'no_outcome' },
});
