import { assign, setup } from 'xstate';

/** Context of one approval: its id and its deadline, kept as data so a restore can re-arm it. */
export interface ApprovalContext {
  readonly approvalId: string;
  readonly runId: string;
  /** Milliseconds since the epoch after which no decision is accepted. */
  readonly expiresAt: number;
  readonly decidedBy: string | null;
  readonly status: 'requested' | 'approved' | 'denied' | 'expired';
}

/** Events of an approval. `now` comes from the sender's clock, so the machine stays pure. */
export type ApprovalEvent =
  | {
      readonly type: 'DECIDE';
      readonly decision: 'approved' | 'denied';
      readonly user: string;
      readonly now: number;
    }
  | { readonly type: 'EXPIRE'; readonly now: number };

/**
 * The approval machine: `requested → approved | denied | expired`. Expiry is data
 * (`expiresAt`), never an `after` timer (XState does not persist those): the runtime re-arms a
 * timer from `expiresAt` on restore and sends `EXPIRE`. A decision arriving after the deadline
 * expires the approval instead. Every final state ignores later events (single use).
 */
export const approvalMachine = setup({
  types: {
    context: {} as ApprovalContext,
    events: {} as ApprovalEvent,
    input: {} as { approvalId: string; runId: string; expiresAt: number },
    output: {} as { approvalId: string; status: 'approved' | 'denied' | 'expired'; decidedBy: string | null },
  },
  guards: {
    late: ({ context, event }) => event.now >= context.expiresAt,
  },
}).createMachine({
  id: 'approval',
  context: ({ input }) => ({ ...input, decidedBy: null, status: 'requested' as const }),
  initial: 'requested',
  states: {
    requested: {
      on: {
        DECIDE: [
          { guard: 'late', target: 'expired', actions: assign({ status: 'expired' }) },
          {
            guard: ({ event }) => event.decision === 'approved',
            target: 'approved',
            actions: assign({ decidedBy: ({ event }) => event.user, status: 'approved' }),
          },
          { target: 'denied', actions: assign({ decidedBy: ({ event }) => event.user, status: 'denied' }) },
        ],
        EXPIRE: { guard: 'late', target: 'expired', actions: assign({ status: 'expired' }) },
      },
    },
    approved: { type: 'final' },
    denied: { type: 'final' },
    expired: { type: 'final' },
  },
  output: ({ context }) => ({
    approvalId: context.approvalId,
    status: context.status === 'requested' ? 'expired' : context.status,
    decidedBy: context.decidedBy,
  }),
});
