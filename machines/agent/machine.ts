import { assign, setup } from 'xstate';
import type { Interaction } from '../../policy/risk.ts';
import { makeRunId } from '../run/run-id.ts';

/** A message from a surface (chat, a scheduled task, a parent agent) to an agent. */
export interface AgentMessage {
  readonly type: 'MESSAGE';
  readonly messageId: string;
  readonly sessionId: string;
  readonly taskId: string | null;
  readonly parentRunId: string | null;
  readonly surface: string;
  readonly interaction: Interaction;
  readonly text: string;
  /**
   * The run continues its session as a durable conversation: it starts with the session's
   * history and appends what it adds when it ends (runtime/sessions). Absent: a run on its own.
   */
  readonly conversation?: boolean;
}

/** Events of an agent actor. */
export type AgentEvent = AgentMessage | { readonly type: 'RUN_ENDED'; readonly runId: string };

/** Context of an agent actor: which runs it started and which are live. */
export interface AgentContext {
  readonly agentId: string;
  readonly maxConcurrentRuns: number;
  readonly liveRuns: readonly string[];
  readonly started: number;
  readonly refused: number;
}

/**
 * The agent machine: receives messages from its surfaces and starts one run per message (the
 * run machine drives the model steps and proposes tool calls under the run's budgets). It caps
 * concurrent runs; a message over the cap is refused through the `refuse` effect, never queued
 * silently. Effects (`startRun`, `refuse`) are provided by `actors/`.
 */
export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as { agentId: string; maxConcurrentRuns: number },
  },
  actions: {
    startRun: (_, _params: { message: AgentMessage; runId: string }) => {},
    refuse: (_, _params: { message: AgentMessage; reason: string }) => {},
  },
  guards: {
    hasCapacity: ({ context }) => context.liveRuns.length < context.maxConcurrentRuns,
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({ ...input, liveRuns: [], started: 0, refused: 0 }),
  initial: 'ready',
  states: {
    ready: {
      on: {
        MESSAGE: [
          {
            guard: 'hasCapacity',
            actions: [
              {
                type: 'startRun',
                params: ({ context, event }) => ({
                  message: event,
                  runId: makeRunId(context.agentId, event.messageId),
                }),
              },
              assign({
                liveRuns: ({ context, event }) => [
                  ...context.liveRuns,
                  makeRunId(context.agentId, event.messageId),
                ],
                started: ({ context }) => context.started + 1,
              }),
            ],
          },
          {
            actions: [
              { type: 'refuse', params: ({ event }) => ({ message: event, reason: 'too_many_runs' }) },
              assign({ refused: ({ context }) => context.refused + 1 }),
            ],
          },
        ],
        RUN_ENDED: {
          actions: assign({
            liveRuns: ({ context, event }) => context.liveRuns.filter((r) => r !== event.runId),
          }),
        },
      },
    },
  },
});
