import { assign, fromPromise, setup } from 'xstate';
import { iterationMessageId, makeRunId } from '../run/run-id.ts';
import type {
  BeginIterationInput,
  GoalContext,
  GoalEvent,
  GoalInput,
  GoalLimits,
  GoalOutput,
  GoalSpent,
  IterationOutcome,
} from './types.ts';

export { iterationMessageId };

/** The run id of a goal iteration: deterministic, so a restart finds the same run. */
export function iterationRunId(agentId: string, goalId: string, epoch: number, iteration: number): string {
  return makeRunId(agentId, iterationMessageId(goalId, epoch, iteration));
}

/** The limits whose end stops the goal (`budget_limited`) before another iteration starts. */
const LIMITS = ['modelCalls', 'toolCalls', 'wallTimeMs'] as const;
/** The limits a run parks on when it would go past them (a human may extend its run, once). */
const USAGE_LIMITS = ['tokens', 'costUsd'] as const;

/** What a goal has left of each limit it sets (an unset limit stays unset). */
export function remainingOf(budget: GoalLimits, used: GoalSpent): GoalLimits {
  const out: { -readonly [K in keyof GoalLimits]: number } = {};
  for (const k of [...LIMITS, ...USAGE_LIMITS]) {
    const limit = budget[k];
    if (limit !== undefined) out[k] = Math.max(0, limit - (used[k] ?? 0));
  }
  return out;
}

/**
 * The stop reason when an iteration's run ended on a declined (or expired) request for more of
 * a tokens or cost limit the goal sets: the goal ends `budget_limited` with it. Null otherwise
 * (a run's own limit the goal does not set ends that run only).
 */
export function declinedLimit(budget: GoalLimits, outcome: IterationOutcome | null): string | null {
  if (outcome === null || outcome.status !== 'failed') return null;
  for (const k of USAGE_LIMITS)
    if (budget[k] !== undefined && outcome.reason === STOP_REASON[k]) return outcome.reason;
  return null;
}

/** The first limit the goal has used up, or null. */
export function exhaustedLimit(budget: GoalLimits, used: GoalSpent): (typeof LIMITS)[number] | null {
  for (const k of LIMITS) {
    const limit = budget[k];
    if (limit !== undefined && used[k] >= limit) return k;
  }
  return null;
}

const STOP_REASON = {
  modelCalls: 'budget_model_calls',
  toolCalls: 'budget_tool_calls',
  wallTimeMs: 'budget_wall_time',
  tokens: 'budget_tokens',
  costUsd: 'budget_cost',
} as const;

function unprovided<TOut, TIn>(name: string) {
  return fromPromise<TOut, TIn>(async () => {
    throw new Error(`goal machine: effect "${name}" was not provided (use machine.provide)`);
  });
}

const isCurrentRun = ({ context, event }: { context: GoalContext; event: GoalEvent }) =>
  'runId' in event && event.runId === context.runId && !context.accounted;

/**
 * The goal machine (pure): one unattended run per iteration, the next only once the previous
 * one ended and nothing is parked. `active` holds `starting` (record the iteration, start its
 * run — idempotent, it re-runs on restore), `running` and `parked` (the run waits for a human:
 * the goal waits too, it never decides for them). It stops as `complete` when the model claimed
 * completion (`goal_complete`), `budget_limited` when a goal limit or the iteration cap is
 * reached (tokens and cost: when a human declined to extend a run that would go past them; the
 * run parks on that request, the goal with it), `failed` when a run failed for another reason than its budget, `cancelled` by a
 * human. `PAUSE` while a run is in flight lets that run finish, then pauses; `RESUME` goes on.
 * Run events name their run and are accounted once: a stale or repeated one changes nothing.
 */
export const goalMachine = setup({
  types: {
    context: {} as GoalContext,
    events: {} as GoalEvent,
    input: {} as GoalInput,
    output: {} as GoalOutput,
  },
  actors: {
    beginIteration: unprovided<{ runId: string }, BeginIterationInput>('beginIteration'),
  },
  actions: {
    /** Asks the runtime to cancel the current iteration's run (a human cancelled the goal). */
    cancelRun: (_, _params: { runId: string | null }) => {},
    /** Bills the ended run to the goal, once (the guard `isCurrentRun` keeps a repeat out). */
    account: assign(({ context, event }) => {
      if (event.type !== 'RUN_ENDED') return {};
      return {
        accounted: true,
        used: {
          modelCalls: context.used.modelCalls + event.usage.modelCalls,
          toolCalls: context.used.toolCalls + event.usage.toolCalls,
          wallTimeMs: context.used.wallTimeMs + event.usage.wallTimeMs,
          tokens: (context.used.tokens ?? 0) + (event.usage.tokens ?? 0),
          costUsd: (context.used.costUsd ?? 0) + (event.usage.costUsd ?? 0),
        },
        lastOutcome: event.outcome,
        evidence: context.evidence ?? event.claim,
      };
    }),
  },
  guards: {
    isCurrentRun,
    claimed: ({ context }) => context.evidence !== null,
    runFailed: ({ context }) =>
      context.lastOutcome !== null &&
      context.lastOutcome.status === 'failed' &&
      !context.lastOutcome.reason.startsWith('budget_'),
    budgetExhausted: ({ context }) => exhaustedLimit(context.budget, context.used) !== null,
    budgetDeclined: ({ context }) => declinedLimit(context.budget, context.lastOutcome) !== null,
    iterationCapReached: ({ context }) => context.iteration >= context.maxIterations,
    pauseRequested: ({ context }) => context.pauseRequested,
  },
}).createMachine({
  id: 'goal',
  context: ({ input }) => ({
    ...input,
    iteration: 0,
    runId: null,
    accounted: true,
    used: { modelCalls: 0, toolCalls: 0, wallTimeMs: 0, tokens: 0, costUsd: 0 },
    pauseRequested: false,
    evidence: null,
    lastOutcome: null,
    stopReason: null,
  }),
  initial: 'active',
  on: {
    CANCEL: {
      target: '.cancelled',
      actions: [
        {
          type: 'cancelRun',
          params: ({ context }) => ({ runId: context.accounted ? null : context.runId }),
        },
        assign({ stopReason: 'cancelled_by_human' }),
      ],
    },
  },
  states: {
    active: {
      initial: 'checking',
      on: {
        PAUSE: { actions: assign({ pauseRequested: true }) },
        RESUME: { actions: assign({ pauseRequested: false }) },
      },
      states: {
        checking: {
          always: [
            {
              guard: 'budgetExhausted',
              target: '#goal.budget_limited',
              actions: assign({
                stopReason: ({ context }) =>
                  STOP_REASON[exhaustedLimit(context.budget, context.used) ?? 'modelCalls'],
              }),
            },
            {
              guard: 'iterationCapReached',
              target: '#goal.budget_limited',
              actions: assign({ stopReason: 'max_iterations' }),
            },
            { guard: 'pauseRequested', target: '#goal.paused' },
            { target: 'starting' },
          ],
        },
        starting: {
          invoke: {
            src: 'beginIteration',
            input: ({ context }) => ({
              goalId: context.goalId,
              epoch: context.epoch,
              agentId: context.agentId,
              iteration: context.iteration + 1,
              remaining: remainingOf(context.budget, context.used),
            }),
            onDone: {
              target: 'running',
              actions: assign(({ context, event }) => ({
                iteration: context.iteration + 1,
                runId: event.output.runId,
                accounted: false,
                lastOutcome: null,
              })),
            },
            onError: { target: '#goal.failed', actions: assign({ stopReason: 'iteration_start_failed' }) },
          },
        },
        running: {
          on: {
            RUN_PARKED: { guard: 'isCurrentRun', target: 'parked' },
            RUN_ENDED: { guard: 'isCurrentRun', target: 'ended', actions: 'account' },
          },
        },
        parked: {
          on: {
            RUN_RESUMED: { guard: 'isCurrentRun', target: 'running' },
            RUN_ENDED: { guard: 'isCurrentRun', target: 'ended', actions: 'account' },
          },
        },
        ended: {
          always: [
            { guard: 'claimed', target: '#goal.complete', actions: assign({ stopReason: 'goal_complete' }) },
            {
              guard: 'budgetDeclined',
              target: '#goal.budget_limited',
              actions: assign({
                stopReason: ({ context }) =>
                  declinedLimit(context.budget, context.lastOutcome) ?? 'budget_tokens',
              }),
            },
            {
              guard: 'runFailed',
              target: '#goal.failed',
              actions: assign({
                stopReason: ({ context }) => `run_failed: ${context.lastOutcome?.reason ?? 'unknown'}`,
              }),
            },
            { target: 'checking' },
          ],
        },
      },
    },
    paused: {
      on: { RESUME: { target: 'active', actions: assign({ pauseRequested: false }) } },
    },
    complete: { type: 'final' },
    budget_limited: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
  output: ({ context }) => ({ stopReason: context.stopReason ?? 'stopped' }),
});
