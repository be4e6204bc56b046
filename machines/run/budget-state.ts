import { assign } from 'xstate';
import { BUDGET_REASON, extendBudget } from './budget.ts';
import { runSetup } from './setup.ts';
import type { RunContext, RunEvent } from './types.ts';

function declined(
  context: RunContext,
  event: RunEvent,
): { readonly reason: string; readonly message: string } {
  const request = context.budgetRequest;
  const dimension = request?.dimension ?? 'wallTimeMs';
  const decision = event.type === 'APPROVAL_DECIDED' ? event.decision : 'denied';
  const why =
    decision === 'expired'
      ? 'the request for more expired without a decision'
      : 'a human declined to extend it';
  return {
    reason: BUDGET_REASON[dimension],
    message: `the run used its whole ${dimension} budget (${request?.limit ?? 0}); ${why}`,
  };
}

/**
 * The run went past a budget and waits for a human (an Inbox item of kind `budget`; attended,
 * asked inline): approved, the budget grows once by the grant and the run goes on where it
 * stopped; denied or expired, it ends failed with the budget's reason code, as a breach did
 * before budgets could park. Its wall-time deadline does not end it while it waits.
 */
export const waitingForBudget = runSetup.createStateConfig({
  invoke: {
    src: 'openBudgetRequest',
    input: ({ context }) => {
      if (context.budgetRequest == null || context.approvalId === null)
        throw new Error(`run ${context.runId}: waiting for budget without a request`);
      return { context, request: context.budgetRequest, approvalId: context.approvalId };
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
        // `checking` goes on to the next tool call, or to the next model call when there is none.
        target: '#run.running.acting.checking',
        actions: assign(({ context, event }) => {
          const request = context.budgetRequest;
          if (request == null) return {};
          const decidedAt = event.type === 'APPROVAL_DECIDED' ? (event.decidedAt ?? null) : null;
          return {
            budget: extendBudget(context, request, decidedAt),
            granted: {
              ...context.granted,
              [request.dimension]: (context.granted?.[request.dimension] ?? 0) + request.grant,
            },
            overtime: request.dimension === 'wallTimeMs' ? false : context.overtime,
            budgetRequest: null,
            approvalId: null,
          };
        }),
      },
      {
        guard: { type: 'isThisApproval' },
        target: 'failed',
        actions: assign(({ context, event }) => ({
          outcome: { status: 'failed' as const, ...declined(context, event) },
        })),
      },
    ],
  },
});
