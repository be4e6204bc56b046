import { assign } from 'xstate';
import { callSignature, current, deniedObservation, observe } from './calls.ts';
import { runSetup } from './setup.ts';

/**
 * The run waits for a human's decision on one call (DESIGN.md §3): approved, it resumes and
 * executes the call; denied with a reason, the model hears the reason and goes on; denied
 * without one, or expired, the run ends `denied`.
 */
export const waitingForApproval = runSetup.createStateConfig({
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
                deniedObservation(call, { reason: 'approval_denied' }, `a human denied this call: ${reason}`),
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
});
