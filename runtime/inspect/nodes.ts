import type { AgentContext } from '../../machines/agent/machine.ts';
import type { RunContext } from '../../machines/run/types.ts';
import { parseIterationMessageId, parseRunId } from '../../machines/run/run-id.ts';
import { GOAL_SURFACE } from '../../policy/goal-tools.ts';
import type {
  ApprovalRecord,
  GoalBudget,
  GoalRecord,
  GoalUsage,
  RunStatus,
  RunSummary,
} from '../../store/index.ts';
import type { ActorFields, BudgetUse } from './types.ts';

/** The approval machine's state for a stored approval status. */
const APPROVAL_STATE: Readonly<Record<ApprovalRecord['status'], string>> = {
  pending: 'requested',
  approved: 'approved',
  denied: 'denied',
  expired: 'expired',
};

/**
 * A run as a node: ids, state, status, parked and its budgets (model and tool calls spent against
 * their limits). Reads only those fields of the context: no transcript, call or argument.
 */
export function runFields(ctx: RunContext, state: string, status: RunStatus): ActorFields {
  const parked = status === 'waiting_for_approval' && ctx.interaction === 'unattended';
  return {
    id: ctx.runId,
    kind: 'run',
    machine: 'run',
    state,
    parked,
    status,
    agentId: ctx.agentId,
    ...(ctx.parentRunId === null ? {} : { parentRunId: ctx.parentRunId }),
    ...goalOf(ctx.surface, ctx.agentId, ctx.runId),
    budgets: {
      modelCalls: { used: ctx.used.modelCalls, limit: ctx.budget.modelCalls },
      toolCalls: { used: ctx.used.toolCalls, limit: ctx.budget.toolCalls },
    },
  };
}

/**
 * A run found only in the store, waiting for a human with no live actor (e.g. after a restart):
 * from its summary row alone (no snapshot is decoded), so without budgets until it is live again.
 */
export function storedRunFields(summary: RunSummary): ActorFields {
  return {
    id: summary.runId,
    kind: 'run',
    machine: 'run',
    // The run machine's state of that status (statusOf maps it one to one).
    state: summary.status,
    parked: summary.status === 'waiting_for_approval',
    status: summary.status,
    agentId: summary.agentId,
    ...(summary.parentRunId === null ? {} : { parentRunId: summary.parentRunId }),
    ...goalOf(summary.surface, summary.agentId, summary.runId),
  };
}

/** A goal id as config allows it: only such an id is shown in the tree. */
const GOAL_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** `{ goalId }` for the run of a goal loop's iteration (surface `goal`, id from its identity), else `{}`. */
export function goalOf(surface: string, agentId: string, runId: string): { goalId?: string } {
  if (surface !== GOAL_SURFACE) return {};
  const run = parseRunId(runId);
  if (run === null || run.agentId !== agentId) return {};
  const goalId = parseIterationMessageId(run.messageId)?.goalId;
  return goalId === undefined || !GOAL_ID.test(goalId) ? {} : { goalId };
}

/** What a goal node shows: ids, the machine's state, status, parked and the counters (never the objective or evidence). */
export interface GoalView {
  readonly goalId: string;
  readonly agentId: string;
  readonly state: string;
  /** The stored status; absent for a configured goal never started. */
  readonly status?: string;
  readonly parked: boolean;
  readonly iteration: number;
  readonly maxIterations: number;
  readonly budget: GoalBudget;
  readonly used: Pick<GoalUsage, 'modelCalls' | 'toolCalls' | 'tokens' | 'costUsd'>;
}

/**
 * A goal's tokens or cost against its limit: shown when the goal sets that limit or has spent
 * some (cost rounded to a millionth of a dollar, so sums of prices show as they are meant).
 */
function usageBudget(used: number | undefined, limit: number | undefined, cost: boolean): BudgetUse | null {
  const spent = used ?? 0;
  if (limit === undefined && spent === 0) return null;
  return { used: cost ? Math.round(spent * 1e6) / 1e6 : spent, limit: limit ?? null };
}

/** The state a configured goal that was never started shows (it has no machine yet). */
export const GOAL_NOT_STARTED = 'not_started';

/** A goal loop as a node: its state, status, parked, and iterations, model and tool calls (and tokens and cost when limited or spent) against their limits. */
export function goalFields(g: GoalView): ActorFields {
  return {
    id: g.goalId,
    kind: 'goal',
    machine: 'goal',
    state: g.state,
    parked: g.parked,
    ...(g.status === undefined ? {} : { status: g.status }),
    agentId: g.agentId,
    budgets: {
      iterations: { used: g.iteration, limit: g.maxIterations },
      modelCalls: { used: g.used.modelCalls, limit: g.budget.modelCalls ?? null },
      toolCalls: { used: g.used.toolCalls, limit: g.budget.toolCalls ?? null },
      ...withBudget('tokens', usageBudget(g.used.tokens, g.budget.tokens, false)),
      ...withBudget('costUsd', usageBudget(g.used.costUsd, g.budget.costUsd, true)),
    },
  };
}

const withBudget = (name: string, b: BudgetUse | null): Record<string, BudgetUse> =>
  b === null ? {} : { [name]: b };

/**
 * A goal from its stored record alone (at boot, before its machine is restored, or a goal that
 * has stopped): the goal machine's state of that status (a final status is its final state).
 */
export function storedGoalFields(r: GoalRecord): ActorFields {
  const state = r.status === 'active' ? (r.parked ? 'active.parked' : 'active.running') : r.status;
  return goalFields({ ...r, state, status: r.status, parked: r.status === 'active' && r.parked });
}

/** An agent as a node: its state and its live runs against the cap. */
export function agentFields(ctx: AgentContext, state: string): ActorFields {
  return {
    id: ctx.agentId,
    kind: 'agent',
    machine: 'agent',
    state,
    parked: false,
    agentId: ctx.agentId,
    budgets: { runs: { used: ctx.liveRuns.length, limit: ctx.maxConcurrentRuns } },
  };
}

/** An approval as a node: the tool's name and the status only (never the arguments, target or reason). */
export function approvalFields(a: ApprovalRecord, unattended: boolean): ActorFields {
  return {
    id: a.id,
    kind: 'approval',
    machine: 'approval',
    state: APPROVAL_STATE[a.status],
    parked: unattended && a.status === 'pending',
    status: a.status,
    agentId: a.agentId,
    ...(a.runId === null ? {} : { runId: a.runId }),
    ...(a.parentRunId === null ? {} : { parentRunId: a.parentRunId }),
    tool: a.tool,
  };
}

/** Whether two nodes show the same thing (budgets compared by value). */
export function sameFields(a: ActorFields, b: ActorFields): boolean {
  if (
    a.state !== b.state ||
    a.parked !== b.parked ||
    a.status !== b.status ||
    a.parentRunId !== b.parentRunId ||
    a.runId !== b.runId ||
    a.goalId !== b.goalId ||
    a.agentId !== b.agentId ||
    a.tool !== b.tool
  )
    return false;
  const ab = a.budgets ?? {};
  const bb = b.budgets ?? {};
  const keys = Object.keys(ab);
  if (keys.length !== Object.keys(bb).length) return false;
  return keys.every((k) => ab[k]?.used === bb[k]?.used && ab[k]?.limit === bb[k]?.limit);
}
