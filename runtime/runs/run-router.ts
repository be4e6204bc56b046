import type { AgentMessage } from '../../machines/agent/machine.ts';
import { sessionSlice } from '../../machines/run/budget.ts';
import type { BudgetDimension, RunContext, RunInput, RunOutcome } from '../../machines/run/types.ts';
import { GOAL_SURFACE } from '../../policy/goal-tools.ts';
import type { Interaction } from '../../policy/risk.ts';
import type { ApprovalRecord, Store } from '../../store/index.ts';
import type { AgentPool } from '../agents/agent-pool.ts';
import type { ApprovalService } from '../approvals/approval-service.ts';
import { subject, type Bus, type TraceOf } from '../bus/index.ts';
import type { ClusterNode } from '../cluster/index.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { GoalHost } from '../goals/goal-host.ts';
import type { Inspector } from '../inspect/index.ts';
import type { RuntimeKinds } from '../messages.ts';
import { PLATFORM_SURFACE, type PlatformHost } from '../platforms/host.ts';
import type { RunFeed } from '../run-feed.ts';
import type { Clock } from '../time/clock.ts';
import { DEFAULT_BUDGET } from '../boot/options.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { RunHost } from './run-host.ts';
import type { RunWaiters } from './run-waiters.ts';

/** A pending approval as a surface sees it (attended: inline; unattended: in the Inbox). */
export type ApprovalListener = (approval: ApprovalRecord, interaction: Interaction) => void;

/** What the router hands each moment of a run to. */
export interface RunRouterDeps {
  readonly loaded: LoadedConfig;
  readonly store: Store;
  readonly bus: Bus<RuntimeKinds>;
  readonly runs: RunHost;
  /** Who waits for a run to end: told last when it does. */
  readonly waiters: RunWaiters;
  readonly sessions: Sessions;
  readonly approvals: ApprovalService;
  readonly feed: RunFeed;
  readonly inspector: Inspector;
  readonly agents: AgentPool;
  readonly goals: GoalHost;
  readonly platforms: PlatformHost;
  readonly cluster: ClusterNode | null;
  readonly clock: Clock;
  /** Whether the runtime is stopping (a goal's run that ends then is not reported to it). */
  readonly stopping: () => boolean;
  /** A run's trace context, sent in the headers of the bus messages about it (none without telemetry). */
  readonly traceOf: TraceOf;
}

/**
 * What happens when a run starts, asks for approval, parks and ends: who is told (the live feed,
 * the actor tree, the bus, the goal or platform that started it, the agent's slots, the callers
 * waiting for it: `RunWaiters`) and what follows (an unattended run parks once its request is in the Inbox).
 */
export class RunRouter {
  readonly #approvalListeners = new Set<ApprovalListener>();

  constructor(private readonly deps: RunRouterDeps) {}

  /** Starts the run an agent accepted a message for, on its budget (a goal's or a platform's limits applied). */
  startRun(agentId: string, message: AgentMessage, runId: string): void {
    const { deps } = this;
    const def = deps.loaded.config.agents[agentId];
    // A durable conversation: the run starts after the session's history as it is now.
    const historyUpTo =
      message.conversation === true && message.parentRunId === null
        ? deps.sessions.startRun(message.sessionId, runId, {
            agentId,
            surface: message.surface,
            firstMessage: message.text,
          })
        : undefined;
    // A goal iteration runs on what its goal has left (recorded with the iteration); a platform
    // message within its turn cap; a session's run within what its session has left.
    const goal = message.surface === GOAL_SURFACE ? deps.goals.budgetFor(runId) : null;
    const own = deps.platforms.limitBudget(message, goal?.budget ?? { ...DEFAULT_BUDGET, ...def?.budget });
    const sliced =
      historyUpTo === undefined || def?.sessionBudget === undefined
        ? goal === null
          ? null
          : { budget: own, grants: goal.grants }
        : sessionSlice(own, def.sessionBudget, deps.sessions.usage(message.sessionId));
    // A goal's tokens and cost park its run like a session's; its other limits end the run.
    const askFor = Object.keys(goal?.grants ?? {}) as BudgetDimension[];
    deps.runs.start({
      runId,
      agentId,
      sessionId: message.sessionId,
      taskId: message.taskId,
      parentRunId: message.parentRunId,
      surface: message.surface,
      interaction: message.interaction,
      message: message.text,
      ...(historyUpTo === undefined ? {} : { historyUpTo }),
      budget: sliced?.budget ?? own,
      ...(sliced === null || Object.keys(sliced.grants).length === 0 ? {} : { grants: sliced.grants }),
      // A goal's and a platform message's limits end the run; any other breach asks a human.
      onBudget:
        message.surface === GOAL_SURFACE ||
        message.surface === PLATFORM_SURFACE ||
        message.parentRunId !== null
          ? 'fail'
          : 'ask',
      ...(askFor.length === 0 ? {} : { askFor }),
      startedAt: deps.clock.now(),
    });
  }

  /** Listens for approvals that need a human; returns the removal. */
  onApproval(listener: ApprovalListener): () => void {
    this.#approvalListeners.add(listener);
    return () => this.#approvalListeners.delete(listener);
  }

  /** A run started (`run.started` on the feed). */
  started(input: RunInput): void {
    this.deps.feed.started(input);
  }

  /** The session, agent and surface a run's effects record (from its live context). */
  runMeta(runId: string): { sessionId: string; agentId: string; surface: string } {
    // The live context when the run is live (no snapshot decoding on the hot path).
    const ctx = this.deps.runs.contextOf(runId);
    return {
      sessionId: ctx?.sessionId ?? 'unknown',
      agentId: ctx?.agentId ?? 'unknown',
      surface: ctx?.surface ?? 'unknown',
    };
  }

  /** A run asked for approval: report it everywhere, track its deadline, park an unattended run. */
  approvalOpened(approval: ApprovalRecord, ctx: RunContext): void {
    const { deps } = this;
    // Found again already decided (a restart): tracking it delivers the decision.
    if (approval.status !== 'pending') {
      deps.approvals.track(approval);
      return;
    }
    // Cluster mode: the request goes to the shared Inbox; the run parks once it is there.
    const published = deps.cluster?.approvalOpened(approval);
    try {
      deps.inspector.approvalOpened(approval, ctx.interaction);
      deps.bus.publish(
        subject('approval', approval.id, 'requested'),
        'approval.requested',
        {
          approvalId: approval.id,
          runId: approval.runId,
          agentId: approval.agentId,
          parentRunId: approval.parentRunId,
          tool: approval.tool,
          risk: approval.risk,
          reason: approval.reason,
          expiresAt: approval.expiresAt,
        },
        { trace: approval.runId === null ? null : deps.traceOf(approval.runId) },
      );
      deps.feed.approvalRequested(approval, ctx);
      for (const l of this.#approvalListeners) l(approval, ctx.interaction);
    } finally {
      // Tracked once reported (a decision that came before the report reaches the run only
      // now), and tracked even when a report failed: its deadline is armed whatever happened.
      deps.approvals.track(approval);
    }
    if (ctx.interaction === 'unattended') {
      // Park once the approval row is committed: the snapshot is persisted and the actor stopped.
      const park = (): void => {
        // Called outside any caller that could catch (a later turn of the event loop): a store
        // closed meanwhile (a test's simulated crash) leaves it there.
        if (!deps.store.open) return;
        if (deps.store.approvals.get(approval.id)?.status !== 'pending') return;
        // Ended meanwhile (cancelled or past its deadline while the approval was being synced).
        if (!deps.runs.isLive(ctx.runId)) return;
        deps.runs.park(ctx.runId);
        deps.feed.parked(ctx, approval.id);
        // A parked run holds no slot of its agent: other tasks may start while it waits.
        deps.agents.runEnded(ctx.agentId, ctx.runId);
      };
      if (published === undefined) setImmediate(park);
      else void published.then(park);
    }
  }

  /** A run's status changed: the goal that started it and the bus hear it. */
  status(runId: string, status: string, ctx: RunContext): void {
    const { deps } = this;
    if (deps.stopping()) return;
    if (ctx.surface === GOAL_SURFACE) deps.goals.runStatus(runId, status);
    deps.bus.publish(
      subject('run', runId, 'status'),
      'run.status',
      {
        runId,
        agentId: ctx.agentId,
        status: status as 'running',
        ...(ctx.outcome ? { reason: ctx.outcome.reason } : {}),
      },
      { trace: deps.traceOf(runId) },
    );
  }

  /** A run ended: its requests leave the Inbox, its slot is freed, its goal and waiters are told. */
  ended(runId: string, outcome: RunOutcome, ctx: RunContext): void {
    const { deps } = this;
    try {
      // What the run added joins its session before anyone waiting for the run hears it ended.
      deps.sessions.runEnded(ctx);
      deps.feed.ended(ctx, outcome);
      deps.inspector.runEnded(runId);
      // A run that ended while a request waited (a cancel, its deadline): the request leaves the Inbox.
      deps.approvals.withdrawForRun(runId, `its run ended ${outcome.status} (${outcome.reason})`);
      deps.agents.runEnded(ctx.agentId, runId);
      if (ctx.surface === GOAL_SURFACE && !deps.stopping()) deps.goals.runEnded(runId, outcome, ctx);
    } finally {
      // Whoever waits for the run hears it ended, even when a part above threw (the error still
      // goes on to the caller): a waiter left waiting hangs its surface for good.
      deps.waiters.ended(runId, outcome);
    }
  }
}
