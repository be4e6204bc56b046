import { assertWritable, fromStoredJson, toStoredJson, toStoredText, type StoreContext } from '../context.ts';
import { prepare, toControl, toIteration, type GoalRow, type IterationRow } from './rows.ts';
import type {
  ClaimResult,
  GoalAction,
  GoalBudget,
  GoalControl,
  GoalRecord,
  GoalStatus,
  GoalUsage,
  IterationBudget,
  IterationRecord,
} from './types.ts';
import { FINAL_GOAL_STATUSES } from './types.ts';

/** What a goal's start needs: the config entry it runs. */
export interface BeginGoalInput {
  readonly goalId: string;
  readonly agentId: string;
  readonly objective: string;
  readonly maxIterations: number;
  readonly budget: GoalBudget;
}

/** The state of a goal as its machine holds it, written with `save` under the goal's epoch. */
export interface GoalStateFields {
  readonly status: GoalStatus;
  readonly stopReason: string | null;
  readonly parked: boolean;
  readonly iteration: number;
  readonly used: GoalUsage;
  readonly evidence: string | null;
  /** The goal machine's persisted snapshot. */
  readonly snapshot: Record<string, unknown>;
}

const DURABLE = { durable: true } as const;

/**
 * The goals of the Goal Loop surface (schema version 6; tokens and cost since 18): their state, the journal of their
 * iterations and the human's control requests. Every write of a goal's state names the epoch it
 * belongs to and changes nothing when the goal has moved on (restarted), so a stale iteration
 * never bills a replaced goal. An iteration is recorded once, durably, before its run starts.
 * On a file older than version 6 (read-only opens) reads return nothing.
 */
export class GoalStore {
  readonly #s: ReturnType<typeof prepare> | null;

  constructor(private readonly ctx: StoreContext) {
    const present =
      (ctx.db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'goals'").pluck().get() as number) > 0;
    this.#s = present ? prepare(ctx) : null;
  }

  /** One goal, or null when it was never started. */
  get(goalId: string): GoalRecord | null {
    const row = this.#s?.get.get(goalId);
    return row === undefined ? null : this.#toGoal(row);
  }

  /** Every goal ever started, by id. */
  list(): GoalRecord[] {
    return (this.#s?.list.all() ?? []).map((r) => this.#toGoal(r));
  }

  /** A goal's epoch and its machine's persisted snapshot (null before its machine first ran). */
  snapshotOf(goalId: string): { epoch: number; snapshot: Record<string, unknown> | null } | null {
    const row = this.#s?.get.get(goalId);
    if (row === undefined) return null;
    const snapshot = fromStoredJson(this.ctx, row.snapshot, `goals(${goalId}).snapshot`);
    return { epoch: row.epoch, snapshot: (snapshot as Record<string, unknown> | null) ?? null };
  }

  /**
   * Starts a goal: a new record (epoch 1), or a new epoch of a finished one (iterations, usage
   * and evidence start from zero). Refused while the goal is active or paused.
   */
  begin(input: BeginGoalInput): { ok: true; goal: GoalRecord } | { ok: false; status: GoalStatus } {
    const s = this.#writable('begin');
    const now = this.ctx.clock();
    return this.ctx.tx.run(() => {
      const old = s.get.get(input.goalId);
      if (old !== undefined && !FINAL_GOAL_STATUSES.has(old.status)) return { ok: false, status: old.status };
      s.upsert.run({
        goal_id: input.goalId,
        epoch: (old?.epoch ?? 0) + 1,
        agent_id: input.agentId,
        objective: toStoredText(this.ctx, input.objective) ?? '',
        max_iterations: input.maxIterations,
        budget: JSON.stringify(input.budget),
        now,
      });
      return { ok: true, goal: this.#toGoal(s.get.get(input.goalId) as GoalRow) };
    }, DURABLE);
  }

  /** Writes a goal's state from its machine; false (nothing written) when `epoch` is not current. */
  save(goalId: string, epoch: number, fields: GoalStateFields): boolean {
    const s = this.#writable('save');
    return (
      this.ctx.tx.runStatement(() =>
        s.save.run({
          goal_id: goalId,
          epoch,
          status: fields.status,
          stop_reason: fields.stopReason,
          parked: fields.parked ? 1 : 0,
          iteration: fields.iteration,
          used_model_calls: fields.used.modelCalls,
          used_tool_calls: fields.used.toolCalls,
          used_wall_ms: fields.used.wallTimeMs,
          used_tokens: fields.used.tokens ?? 0,
          used_cost_usd: fields.used.costUsd ?? 0,
          evidence: toStoredText(this.ctx, fields.evidence),
          snapshot: toStoredJson(this.ctx, fields.snapshot),
          now: this.ctx.clock(),
        }),
      ).changes === 1
    );
  }

  /**
   * Records iteration `iteration` of a goal's `epoch` before its run starts (durably). Returns
   * the record and whether this call created it (false: recorded before, e.g. by the life
   * before a restart — the same run id). Throws when the epoch is not current or the iteration
   * would skip one.
   */
  recordIteration(input: {
    goalId: string;
    epoch: number;
    iteration: number;
    runId: string;
    budget: IterationBudget;
  }): { created: boolean; record: IterationRecord } {
    const s = this.#writable('recordIteration');
    return this.ctx.tx.run(() => {
      const goal = s.get.get(input.goalId);
      if (goal === undefined || goal.epoch !== input.epoch)
        throw new Error(
          `goal ${JSON.stringify(input.goalId)}: epoch ${input.epoch} is not current (${goal?.epoch ?? 'none'})`,
        );
      const existing = s.iteration.get(input.goalId, input.epoch, input.iteration);
      if (existing !== undefined) return { created: false, record: toIteration(this.ctx, existing) };
      const last = (s.lastIteration.get(input.goalId, input.epoch)?.n ?? 0) as number;
      if (input.iteration !== last + 1)
        throw new Error(
          `goal ${JSON.stringify(input.goalId)} epoch ${input.epoch}: iteration ${input.iteration} would follow ${last}`,
        );
      s.insertIteration.run({
        goal_id: input.goalId,
        epoch: input.epoch,
        iteration: input.iteration,
        run_id: input.runId,
        budget: JSON.stringify(input.budget),
        started_at: this.ctx.clock(),
      });
      const row = s.iteration.get(input.goalId, input.epoch, input.iteration) as IterationRow;
      return { created: true, record: toIteration(this.ctx, row) };
    }, DURABLE);
  }

  /** The number of the latest iteration recorded for a goal's epoch (0 before the first). */
  lastIteration(goalId: string, epoch: number): number {
    return this.#s?.lastIteration.get(goalId, epoch)?.n ?? 0;
  }

  /** One iteration, or null. */
  iteration(goalId: string, epoch: number, iteration: number): IterationRecord | null {
    const row = this.#s?.iteration.get(goalId, epoch, iteration);
    return row === undefined ? null : toIteration(this.ctx, row);
  }

  /** The iteration a run belongs to, or null for a run that is not a goal iteration. */
  iterationOfRun(runId: string): IterationRecord | null {
    const row = this.#s?.byRun.get(runId);
    return row === undefined ? null : toIteration(this.ctx, row);
  }

  /** A goal's iterations in order (one epoch, or every epoch). */
  iterations(goalId: string, epoch?: number): IterationRecord[] {
    return (this.#s?.iterations.all({ goal_id: goalId, epoch: epoch ?? null }) ?? []).map((r) =>
      toIteration(this.ctx, r),
    );
  }

  /**
   * Records how an iteration ended and what it spent, once: false when it had already ended or
   * its epoch is no longer current (a stale iteration bills nothing).
   */
  endIteration(goalId: string, epoch: number, iteration: number, outcome: string, usage: GoalUsage): boolean {
    const s = this.#writable('endIteration');
    return (
      this.ctx.tx.runStatement(() =>
        s.endIteration.run({
          goal_id: goalId,
          epoch,
          iteration,
          outcome,
          model_calls: usage.modelCalls,
          tool_calls: usage.toolCalls,
          wall_ms: usage.wallTimeMs,
          tokens: usage.tokens ?? null,
          cost_usd: usage.costUsd ?? null,
          now: this.ctx.clock(),
        }),
      ).changes === 1
    );
  }

  /**
   * Adds what a run spent after its goal had stopped (a run cut short by a cancel) to the goal's
   * totals; only for a stopped goal of that epoch (a live goal's machine does its own billing).
   */
  billStopped(goalId: string, epoch: number, usage: GoalUsage): boolean {
    const s = this.#writable('billStopped');
    return (
      this.ctx.tx.runStatement(() =>
        s.billStopped.run({
          goal_id: goalId,
          epoch,
          model_calls: usage.modelCalls,
          tool_calls: usage.toolCalls,
          wall_ms: usage.wallTimeMs,
          tokens: usage.tokens ?? 0,
          cost_usd: usage.costUsd ?? 0,
          now: this.ctx.clock(),
        }),
      ).changes === 1
    );
  }

  /**
   * Records the model's claim that the goal is complete, for the iteration `runId` belongs to.
   * Only a live iteration of the current epoch of an active goal may claim; the first claim of
   * an iteration stands (a retried call finds it recorded and succeeds again).
   */
  claim(runId: string, evidence: string): ClaimResult {
    const s = this.#writable('claim');
    return this.ctx.tx.run(() => {
      const it = s.byRun.get(runId);
      if (it === undefined) return { ok: false, reason: 'not_a_goal_run' } as const;
      const goal = s.get.get(it.goal_id);
      if (goal === undefined || goal.epoch !== it.epoch)
        return { ok: false, reason: 'stale_iteration' } as const;
      if (goal.status !== 'active' && goal.status !== 'paused')
        return { ok: false, reason: 'goal_not_active' } as const;
      if (it.status !== 'started') return { ok: false, reason: 'iteration_ended' } as const;
      s.claim.run(toStoredText(this.ctx, evidence), it.goal_id, it.epoch, it.iteration);
      return { ok: true, goalId: it.goal_id, epoch: it.epoch, iteration: it.iteration } as const;
    }, DURABLE);
  }

  /** Records a human's request (durably); the runtime applies it at once or at its next start. */
  requestControl(goalId: string, action: GoalAction, by: string): number {
    const s = this.#writable('requestControl');
    return this.ctx.tx.run(
      () => Number(s.insertControl.run(goalId, action, by, this.ctx.clock()).lastInsertRowid),
      DURABLE,
    );
  }

  /** Requests not applied yet, oldest first. */
  pendingControls(): GoalControl[] {
    return (this.#s?.pending.all() ?? []).map(toControl);
  }

  /** One request, or null. */
  control(seq: number): GoalControl | null {
    const row = this.#s?.control.get(seq);
    return row === undefined ? null : toControl(row);
  }

  /** Marks a request applied, with what it did (`ok`) or why it changed nothing. */
  markApplied(seq: number, result: string): void {
    const s = this.#writable('markApplied');
    this.ctx.tx.run(() => s.applied.run(this.ctx.clock(), result, seq), DURABLE);
  }

  #toGoal(r: GoalRow): GoalRecord {
    return {
      goalId: r.goal_id,
      epoch: r.epoch,
      agentId: r.agent_id,
      objective: r.objective,
      status: r.status,
      stopReason: r.stop_reason,
      parked: r.parked === 1,
      iteration: r.iteration,
      maxIterations: r.max_iterations,
      budget: fromStoredJson(this.ctx, r.budget, `goals(${r.goal_id}).budget`) as GoalBudget,
      used: {
        modelCalls: r.used_model_calls,
        toolCalls: r.used_tool_calls,
        wallTimeMs: r.used_wall_ms,
        tokens: r.used_tokens ?? 0,
        costUsd: r.used_cost_usd ?? 0,
      },
      evidence: r.evidence,
      startedAt: r.started_at,
      updatedAt: r.updated_at,
    };
  }

  #writable(operation: string) {
    assertWritable(this.ctx, `goals ${operation}`);
    if (this.#s === null) throw new Error(`${this.ctx.file}: goal tables missing (schema older than 6)`);
    return this.#s;
  }
}
