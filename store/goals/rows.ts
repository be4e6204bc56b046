import type { Statement } from 'better-sqlite3';
import { fromStoredJson, type StoreContext } from '../context.ts';
import type { GoalAction, GoalControl, GoalStatus, IterationBudget, IterationRecord } from './types.ts';

export interface GoalRow {
  goal_id: string;
  epoch: number;
  agent_id: string;
  objective: string;
  status: GoalStatus;
  stop_reason: string | null;
  parked: number;
  iteration: number;
  max_iterations: number;
  budget: string;
  used_model_calls: number;
  used_tool_calls: number;
  used_wall_ms: number;
  /** Since schema version 18. */
  used_tokens?: number;
  used_cost_usd?: number;
  evidence: string | null;
  snapshot: string | null;
  started_at: number;
  updated_at: number;
}

export interface IterationRow {
  goal_id: string;
  epoch: number;
  iteration: number;
  run_id: string;
  budget: string;
  status: 'started' | 'ended';
  outcome: string | null;
  model_calls: number | null;
  tool_calls: number | null;
  wall_ms: number | null;
  /** Since schema version 18. */
  tokens?: number | null;
  cost_usd?: number | null;
  claim: string | null;
  started_at: number;
  ended_at: number | null;
}

export interface ControlRow {
  seq: number;
  goal_id: string;
  action: GoalAction;
  requested_by: string;
  requested_at: number;
  applied_at: number | null;
  result: string | null;
}

/** An iteration row as a record. */
export function toIteration(ctx: StoreContext, r: IterationRow): IterationRecord {
  return {
    goalId: r.goal_id,
    epoch: r.epoch,
    iteration: r.iteration,
    runId: r.run_id,
    budget: fromStoredJson(ctx, r.budget, `goal_iterations(${r.run_id}).budget`) as IterationBudget,
    status: r.status,
    outcome: r.outcome,
    usage:
      r.model_calls === null
        ? null
        : {
            modelCalls: r.model_calls,
            toolCalls: r.tool_calls ?? 0,
            wallTimeMs: r.wall_ms ?? 0,
            ...(r.tokens == null ? {} : { tokens: r.tokens }),
            ...(r.cost_usd == null ? {} : { costUsd: r.cost_usd }),
          },
    claim: r.claim,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  };
}

/** A control row as a record. */
export function toControl(r: ControlRow): GoalControl {
  return {
    seq: r.seq,
    goalId: r.goal_id,
    action: r.action,
    requestedBy: r.requested_by,
    requestedAt: r.requested_at,
    appliedAt: r.applied_at,
    result: r.result,
  };
}

/**
 * The statements of the goal store (schema version 6; tokens and cost since 18). Those that
 * write the usage columns are prepared on first use: a read-only open of a file older than
 * version 18 never prepares them (it only reads, and `SELECT *` finds no such column).
 */
export function prepare(ctx: StoreContext) {
  const db = ctx.db;
  const cache: Partial<Record<'upsert' | 'save' | 'endIteration' | 'billStopped', Statement>> = {};
  return {
    get: db.prepare('SELECT * FROM goals WHERE goal_id = ?') as Statement<[string], GoalRow>,
    list: db.prepare('SELECT * FROM goals ORDER BY goal_id') as Statement<[], GoalRow>,
    get upsert(): Statement {
      return (cache.upsert ??= db.prepare(
        `INSERT INTO goals (goal_id, epoch, agent_id, objective, status, max_iterations, budget, started_at, updated_at)
       VALUES (@goal_id, @epoch, @agent_id, @objective, 'active', @max_iterations, @budget, @now, @now)
       ON CONFLICT (goal_id) DO UPDATE SET epoch = excluded.epoch, agent_id = excluded.agent_id,
         objective = excluded.objective, status = 'active', stop_reason = NULL, parked = 0, iteration = 0,
         max_iterations = excluded.max_iterations, budget = excluded.budget, used_model_calls = 0,
         used_tool_calls = 0, used_wall_ms = 0, used_tokens = 0, used_cost_usd = 0, evidence = NULL, snapshot = NULL,
         started_at = excluded.started_at, updated_at = excluded.updated_at`,
      ) as Statement);
    },
    get save(): Statement {
      return (cache.save ??= db.prepare(
        `UPDATE goals SET status = @status, stop_reason = @stop_reason, parked = @parked, iteration = @iteration,
         used_model_calls = @used_model_calls, used_tool_calls = @used_tool_calls, used_wall_ms = @used_wall_ms,
         used_tokens = @used_tokens, used_cost_usd = @used_cost_usd, evidence = @evidence, snapshot = @snapshot, updated_at = @now
       WHERE goal_id = @goal_id AND epoch = @epoch`,
      ) as Statement);
    },
    iteration: db.prepare(
      'SELECT * FROM goal_iterations WHERE goal_id = ? AND epoch = ? AND iteration = ?',
    ) as Statement<[string, number, number], IterationRow>,
    lastIteration: db.prepare(
      'SELECT max(iteration) AS n FROM goal_iterations WHERE goal_id = ? AND epoch = ?',
    ) as Statement<[string, number], { n: number | null }>,
    byRun: db.prepare('SELECT * FROM goal_iterations WHERE run_id = ?') as Statement<[string], IterationRow>,
    iterations: db.prepare(
      `SELECT * FROM goal_iterations WHERE goal_id = @goal_id AND (@epoch IS NULL OR epoch = @epoch)
       ORDER BY epoch, iteration`,
    ) as Statement<{ goal_id: string; epoch: number | null }, IterationRow>,
    insertIteration: db.prepare(
      `INSERT INTO goal_iterations (goal_id, epoch, iteration, run_id, budget, status, started_at)
       VALUES (@goal_id, @epoch, @iteration, @run_id, @budget, 'started', @started_at)`,
    ) as Statement,
    get endIteration(): Statement {
      return (cache.endIteration ??= db.prepare(
        `UPDATE goal_iterations SET status = 'ended', outcome = @outcome, model_calls = @model_calls,
         tool_calls = @tool_calls, wall_ms = @wall_ms, tokens = @tokens, cost_usd = @cost_usd, ended_at = @now
       WHERE goal_id = @goal_id AND epoch = @epoch AND iteration = @iteration AND status = 'started'
         AND epoch = (SELECT epoch FROM goals WHERE goal_id = @goal_id)`,
      ) as Statement);
    },
    get billStopped(): Statement {
      return (cache.billStopped ??= db.prepare(
        `UPDATE goals SET used_model_calls = used_model_calls + @model_calls,
         used_tool_calls = used_tool_calls + @tool_calls, used_wall_ms = used_wall_ms + @wall_ms,
         used_tokens = used_tokens + @tokens, used_cost_usd = used_cost_usd + @cost_usd, updated_at = @now
       WHERE goal_id = @goal_id AND epoch = @epoch AND status IN ('complete', 'budget_limited', 'failed', 'cancelled')`,
      ) as Statement);
    },
    claim: db.prepare(
      `UPDATE goal_iterations SET claim = ? WHERE goal_id = ? AND epoch = ? AND iteration = ? AND claim IS NULL`,
    ) as Statement,
    insertControl: db.prepare(
      'INSERT INTO goal_controls (goal_id, action, requested_by, requested_at) VALUES (?, ?, ?, ?)',
    ) as Statement,
    pending: db.prepare('SELECT * FROM goal_controls WHERE applied_at IS NULL ORDER BY seq') as Statement<
      [],
      ControlRow
    >,
    control: db.prepare('SELECT * FROM goal_controls WHERE seq = ?') as Statement<[number], ControlRow>,
    applied: db.prepare(
      'UPDATE goal_controls SET applied_at = ?, result = ? WHERE seq = ? AND applied_at IS NULL',
    ) as Statement,
  };
}
