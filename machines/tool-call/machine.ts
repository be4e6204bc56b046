import { setup } from 'xstate';

/** The audit lifecycle events of one tool call (DESIGN.md §3). */
export const TOOL_CALL_STEPS = [
  'proposed',
  'policy_decided',
  'approval_requested',
  'approval_resolved',
  'started',
  'completed',
  'failed',
  'interrupted',
] as const;
export type ToolCallStep = (typeof TOOL_CALL_STEPS)[number];

/** One step of a call's lifecycle as an event of the machine. */
export type ToolCallEvent =
  | { readonly type: 'policy_decided'; readonly decision: 'allow' | 'deny' | 'approval-required' }
  | { readonly type: 'approval_requested' }
  | { readonly type: 'approval_resolved'; readonly approved: boolean }
  | { readonly type: 'started' }
  | { readonly type: 'completed' }
  | { readonly type: 'failed' }
  | { readonly type: 'interrupted' }
  | { readonly type: 'retried' };

/**
 * The tool-call machine: `proposed → policy_decided → approval_requested → approval_resolved →
 * started → completed | failed | interrupted`, skipping the approval steps when none was needed.
 * It is the single definition of which audit step may follow which: the runtime checks every
 * audit event of a call against it. An interrupted call of an idempotent tool may be retried. A
 * call restored with arguments that were redacted at rest is `interrupted` without being started
 * (`notRun`), and never retried.
 */
export const toolCallMachine = setup({
  types: { events: {} as ToolCallEvent },
}).createMachine({
  id: 'toolCall',
  initial: 'proposed',
  states: {
    proposed: {
      on: {
        policy_decided: [
          { guard: ({ event }) => event.decision === 'allow', target: 'allowed' },
          { guard: ({ event }) => event.decision === 'deny', target: 'refused' },
          { target: 'needsApproval' },
        ],
      },
    },
    // `interrupted` before `started`: a call restored with arguments its stored snapshot holds
    // redacted is reported, never run nor retried (actors/run/args-at-rest.ts).
    allowed: { on: { started: 'started', interrupted: 'notRun' } },
    needsApproval: { on: { approval_requested: 'approval_requested' } },
    approval_requested: {
      on: {
        approval_resolved: [
          { guard: ({ event }) => event.approved, target: 'approved' },
          { target: 'refused' },
        ],
      },
    },
    approved: { on: { started: 'started', interrupted: 'notRun' } },
    started: { on: { completed: 'completed', failed: 'failed', interrupted: 'interrupted' } },
    interrupted: { on: { retried: 'started' } },
    completed: { type: 'final' },
    failed: { type: 'final' },
    refused: { type: 'final' },
    notRun: { type: 'final' },
  },
});
