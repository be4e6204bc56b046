/**
 * The budgets of a run, pure: which one a run is about to go past, the request for more it
 * parks on (an Inbox item of kind `budget`), what approving it grants (once), and the slice of
 * what a parent has left that a sub-agent runs on.
 */
import type { Budget, BudgetDimension, BudgetRequest, ModelUsage, RunContext } from './types.ts';

/** The reason code a run ends with when a budget of this dimension is spent and not extended. */
export const BUDGET_REASON = {
  modelCalls: 'budget_model_calls',
  toolCalls: 'budget_tool_calls',
  tokens: 'budget_tokens',
  costUsd: 'budget_cost',
  wallTimeMs: 'budget_wall_time',
} as const satisfies Record<BudgetDimension, string>;
export type BudgetReason = (typeof BUDGET_REASON)[BudgetDimension];

/** Input plus output tokens of a usage (0 for none). */
export function tokensOf(usage: ModelUsage | undefined): number {
  return usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
}

/** What a run has used of one dimension (wall time: its limit once the deadline passed). */
function usedOf(ctx: RunContext, dimension: BudgetDimension): number {
  switch (dimension) {
    case 'modelCalls':
      return ctx.used.modelCalls;
    case 'toolCalls':
      return ctx.used.toolCalls;
    case 'tokens':
      return tokensOf(ctx.tokens);
    case 'costUsd':
      return ctx.tokens?.costUsd ?? 0;
    case 'wallTimeMs':
      return ctx.budget.wallTimeMs;
  }
}

function spent(ctx: RunContext, dimension: 'tokens' | 'costUsd'): boolean {
  const limit = ctx.budget[dimension];
  return limit !== undefined && usedOf(ctx, dimension) >= limit;
}

/**
 * The budget a run would go past with its next model call (model calls, tokens, cost, or wall
 * time once its deadline passed), or null when it may make it.
 */
export function modelCallBreach(ctx: RunContext): BudgetDimension | null {
  if (ctx.overtime === true) return 'wallTimeMs';
  if (ctx.used.modelCalls >= ctx.budget.modelCalls) return 'modelCalls';
  if (spent(ctx, 'tokens')) return 'tokens';
  if (spent(ctx, 'costUsd')) return 'costUsd';
  return null;
}

/** The budget a run would go past with its next tool call, or null when it may make it. */
export function toolCallBreach(ctx: RunContext): BudgetDimension | null {
  if (ctx.overtime === true) return 'wallTimeMs';
  if (ctx.used.toolCalls >= ctx.budget.toolCalls) return 'toolCalls';
  return null;
}

/** The id of a run's `n`th budget request (stable across restarts: opening it again is idempotent). */
export function budgetRequestIdFor(runId: string, n: number): string {
  return `bud:${runId}:${n}`;
}

/**
 * The request a run parks on when `dimension` is spent: approving it grants as much again as
 * the run's own budget of that dimension (what it started with, before any grant), or what
 * `grants` says for it (a run cut to its session's budget).
 */
export function budgetRequestFor(ctx: RunContext, dimension: BudgetDimension): BudgetRequest {
  const limit = ctx.budget[dimension] ?? 0;
  const original = ctx.grants?.[dimension] ?? limit - (ctx.granted?.[dimension] ?? 0);
  const grant = dimension === 'costUsd' ? Math.max(original, 0.01) : Math.max(1, Math.round(original));
  return { dimension, used: usedOf(ctx, dimension), limit, grant };
}

/**
 * The budget once `request` is approved at `decidedAt` (ms): its dimension grows by the grant,
 * once. A wall-time grant counts from the decision (the time the run waited for it is not
 * taken out of it).
 */
export function extendBudget(ctx: RunContext, request: BudgetRequest, decidedAt: number | null): Budget {
  const { dimension, grant } = request;
  if (dimension === 'wallTimeMs') {
    const waited = decidedAt === null ? 0 : decidedAt - ctx.startedAt;
    return { ...ctx.budget, wallTimeMs: Math.max(ctx.budget.wallTimeMs, waited) + grant };
  }
  return { ...ctx.budget, [dimension]: (ctx.budget[dimension] ?? 0) + grant };
}

/** What a parent run has spent and may spend, as `sliceBudget` reads it. */
export interface ParentBudget {
  readonly budget: Budget;
  readonly used: { readonly modelCalls: number; readonly toolCalls: number };
  readonly tokens?: ModelUsage;
  readonly startedAt: number;
}

/**
 * A sub-agent's budget: a slice of what its parent has left now (the `spawn_agent` call itself
 * counted as one of the parent's model and tool calls). Never more than the parent has left in
 * any dimension; a dimension the parent has no limit on (tokens, cost) stays unlimited.
 */
export function sliceBudget(parent: ParentBudget, now: number): Budget {
  const left = (limit: number, used: number) => Math.max(0, limit - used);
  const { budget } = parent;
  return {
    modelCalls: left(budget.modelCalls, parent.used.modelCalls + 1),
    toolCalls: left(budget.toolCalls, parent.used.toolCalls + 1),
    wallTimeMs: left(parent.startedAt + budget.wallTimeMs, now),
    ...(budget.tokens === undefined ? {} : { tokens: left(budget.tokens, tokensOf(parent.tokens)) }),
    ...(budget.costUsd === undefined ? {} : { costUsd: left(budget.costUsd, parent.tokens?.costUsd ?? 0) }),
  };
}

/** Limits on tokens and cost over several runs: a session's (`agents.<id>.sessionBudget`), a goal's. */
export interface SessionLimits {
  readonly tokens?: number | undefined;
  readonly costUsd?: number | undefined;
}

/**
 * The budget a run starts with under limits over several runs (a session's, a goal's): its own,
 * each of tokens and cost cut to what is `left` of the limit (never below 0, so nothing left
 * parks the run before its first model call; absent: the whole limit), and what approving a
 * request of a cut dimension grants: the run's own budget of it, or the whole limit when the run
 * has none. Dimensions without a limit are left as they are. Pure.
 */
export function usageSlice(
  budget: Budget,
  limits: SessionLimits | undefined,
  left: { readonly tokens?: number | undefined; readonly costUsd?: number | undefined },
): { budget: Budget; grants: Partial<Record<BudgetDimension, number>> } {
  const out: { -readonly [K in keyof Budget]: Budget[K] } = { ...budget };
  const grants: Partial<Record<BudgetDimension, number>> = {};
  for (const dimension of ['tokens', 'costUsd'] as const) {
    const limit = limits?.[dimension];
    if (limit === undefined) continue;
    const rest = Math.max(0, left[dimension] ?? limit);
    const own = budget[dimension];
    out[dimension] = own === undefined ? rest : Math.min(own, rest);
    grants[dimension] = own ?? limit;
  }
  return { budget: out, grants };
}

/**
 * The budget a run of a session starts with: `usageSlice` with what the session has left after
 * `used`, the usage of its runs and compactions so far. Pure.
 */
export function sessionSlice(
  budget: Budget,
  session: SessionLimits | undefined,
  used: ModelUsage | null,
): { budget: Budget; grants: Partial<Record<BudgetDimension, number>> } {
  const spent = { tokens: tokensOf(used ?? undefined), costUsd: used?.costUsd ?? 0 };
  return usageSlice(budget, session, {
    ...(session?.tokens === undefined ? {} : { tokens: session.tokens - spent.tokens }),
    ...(session?.costUsd === undefined ? {} : { costUsd: session.costUsd - spent.costUsd }),
  });
}
