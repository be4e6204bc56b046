import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { AuditLog } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, fromStoredJson, toStoredJson, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { quote } from '../errors.ts';
import { Id, parseInput } from '../schema.ts';
import { checkDecisionInput } from './decision-input.ts';
import { APPROVAL_RECORD_VERSION, ApprovalStatus, CreateApprovalInput } from './types.ts';
import type { ApprovalDecision, ApprovalRecord, ApprovalRow, DecideResult, PendingFilter } from './types.ts';

const DURABLE = { durable: true } as const;

/**
 * Approvals and the Inbox (DESIGN.md §7). Every write is durable (fsynced, see durability.ts)
 * and audited in the same transaction. Expiry is data (`expiresAt`), not a timer, so it
 * survives restarts. A decision is single-use: the state change is one conditional UPDATE
 * (`WHERE status = 'pending' AND expires_at > now`), and a trigger refuses any later change.
 */
export class ApprovalInbox {
  private readonly byId: Statement<[string], ApprovalRow>;
  private readonly byCall: Statement<[string], ApprovalRow>;
  #insert: Statement<ApprovalRow> | null = null;
  #decide: Statement<
    [string, string, number, string | null, string | null, string | null, string, number]
  > | null = null;
  private readonly expireStmt: Statement<[number, string]>;
  private readonly pendingOfRun: Statement<[string]>;
  private readonly due: Statement<[number], ApprovalRow>;
  private readonly pending: Statement<{ session: string | null; task: string | null; agent: string | null }>;
  private readonly pendingIdsStmt: Statement<[], { id: string }>;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
  ) {
    const db = ctx.db;
    this.byId = db.prepare('SELECT * FROM approvals WHERE id = ?');
    this.byCall = db.prepare('SELECT * FROM approvals WHERE call_id = ?');
    this.pendingOfRun = db.prepare(
      "SELECT * FROM approvals WHERE status = 'pending' AND run_id = ? ORDER BY created_at, id",
    );
    this.expireStmt = db.prepare(
      "UPDATE approvals SET status = 'expired', decided_at = ? WHERE id = ? AND status = 'pending'",
    );
    this.due = db.prepare(
      "SELECT * FROM approvals WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at, id",
    );
    this.pendingIdsStmt = db.prepare("SELECT id FROM approvals WHERE status = 'pending'");
    this.pending = db.prepare(
      `SELECT * FROM approvals WHERE status = 'pending'
         AND (@session IS NULL OR session_id = @session)
         AND (@task IS NULL OR task_id = @task)
         AND (@agent IS NULL OR agent_id = @agent)
       ORDER BY created_at, rowid`,
    );
  }

  // Write statements are prepared on first use: a read-only open of an older file (before
  // `decision_reason`) must not fail on statements it never runs.
  private get insert(): Statement<ApprovalRow> {
    return (this.#insert ??= this.ctx.db
      .prepare(`INSERT INTO approvals (id, v, kind, call_id, run_id, session_id, task_id, agent_id, parent_agent_id, parent_run_id,
         surface, tool, args, target, risk, reason, rule_id, idempotency_key, resume_checkpoint, created_at,
         expires_at, status, decided_by, decided_at, decision_reason, args_hash, policy_hash, decided_surface,
         decided_node)
       VALUES (@id, @v, @kind, @call_id, @run_id, @session_id, @task_id, @agent_id, @parent_agent_id, @parent_run_id,
         @surface, @tool, @args, @target, @risk, @reason, @rule_id, @idempotency_key, @resume_checkpoint,
         @created_at, @expires_at, @status, @decided_by, @decided_at, @decision_reason, @args_hash, @policy_hash,
         @decided_surface, @decided_node)`));
  }

  private get decideStmt(): Statement<
    [string, string, number, string | null, string | null, string | null, string, number]
  > {
    return (this.#decide ??= this.ctx.db
      .prepare(`UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, decision_reason = ?,
         decided_surface = ?, decided_node = ?
       WHERE id = ? AND status = 'pending' AND expires_at > ?`));
  }

  /**
   * Records a pending approval request with its audit `approval_requested` event. A request for
   * a call that already has one writes nothing and returns the existing one (`created: false`).
   */
  create(input: CreateApprovalInput): { created: boolean; approval: ApprovalRecord } {
    assertWritable(this.ctx, 'approvals.create');
    const req = parseInput(CreateApprovalInput, input, 'approvals.create', this.ctx.redactor);
    return this.ctx.tx.run(() => {
      const existing = this.byCall.get(req.callId);
      if (existing) return { created: false, approval: this.toRecord(existing) };
      const row: ApprovalRow = {
        id: req.id ?? randomUUID(),
        v: APPROVAL_RECORD_VERSION,
        kind: req.kind ?? 'tool',
        call_id: req.callId,
        run_id: req.runId ?? null,
        session_id: req.sessionId,
        task_id: req.taskId ?? null,
        agent_id: req.agentId,
        parent_agent_id: req.parentAgentId ?? null,
        parent_run_id: req.parentRunId ?? null,
        surface: req.surface ?? null,
        tool: req.tool,
        args: toStoredJson(this.ctx, req.args ?? null),
        target: toStoredText(this.ctx, req.target),
        risk: req.risk,
        reason: req.reason,
        rule_id: req.ruleId,
        idempotency_key: req.idempotencyKey,
        resume_checkpoint:
          req.resumeCheckpoint === undefined ? null : toStoredJson(this.ctx, req.resumeCheckpoint),
        created_at: req.createdAt ?? this.ctx.clock(),
        expires_at: req.expiresAt,
        status: ApprovalStatus.pending,
        decided_by: null,
        decided_at: null,
        decision_reason: null,
        args_hash: req.argsHash ?? null,
        policy_hash: req.policyHash ?? null,
        decided_surface: null,
        decided_node: null,
      };
      this.insert.run(row);
      this.record(row, AuditKind.approvalRequested, row.created_at, {
        reason: row.reason,
        expiresAt: row.expires_at,
        idempotencyKey: row.idempotency_key,
        ...(row.args_hash === null ? {} : { argsHash: row.args_hash }),
        ...(row.policy_hash === null ? {} : { policyHash: row.policy_hash }),
      });
      return { created: true, approval: this.toRecord(row) };
    }, DURABLE);
  }

  /**
   * Decides a pending approval, once. Exactly one call per approval ever returns `ok: true`;
   * any other (second, concurrent from another connection or process, stale, after the
   * deadline, unknown id) changes nothing except marking a past-deadline request `expired`,
   * and says why. `now` is the decision time (ms), compared with `expiresAt`. `reason` is the
   * human's optional reason, stored redacted with the decision (a denial's reaches the model).
   */
  decide(
    id: string,
    decision: ApprovalDecision,
    user: string,
    now: number = this.ctx.clock(),
    reason?: string,
    /** Cluster mode: the node the decision was made through (audited with it), when not this one. */
    through?: string,
  ): DecideResult {
    assertWritable(this.ctx, 'approvals.decide');
    checkDecisionInput('approvals.decide', this.ctx.redactor, id, decision, user, now, reason);
    const storedReason = toStoredText(this.ctx, reason);
    const surface = decidingSurface(user);
    return this.ctx.tx.run((): DecideResult => {
      const changed = this.decideStmt.run(
        decision,
        user,
        now,
        storedReason,
        surface,
        through ?? null,
        id,
        now,
      );
      if (changed.changes === 1) {
        const row = this.byId.get(id) as ApprovalRow;
        this.record(row, AuditKind.approvalResolved, now, {
          decidedBy: user,
          decidedSurface: surface,
          ...(storedReason === null ? {} : { decisionReason: storedReason }),
          ...(through === undefined ? {} : { through }),
          ...(row.args_hash === null ? {} : { argsHash: row.args_hash }),
        });
        return { ok: true, approval: this.toRecord(row) };
      }
      const row = this.byId.get(id);
      if (!row) {
        return {
          ok: false,
          reason: 'not_found',
          message: `no approval request with id ${quote(id, this.ctx.redactor)}`,
          approval: null,
        };
      }
      if (row.status === ApprovalStatus.pending) this.expireRow(row, now);
      const current = this.byId.get(id) as ApprovalRow;
      if (current.status === ApprovalStatus.expired) {
        return {
          ok: false,
          reason: 'expired',
          message: `approval ${id} expired at ${iso(current.expires_at)}; the decision was not recorded`,
          approval: this.toRecord(current),
        };
      }
      return {
        ok: false,
        reason: 'already_decided',
        message:
          `approval ${id} was already ${current.status} by ${current.decided_by ?? 'unknown'} at ` +
          `${iso(current.decided_at ?? 0)}; this decision changed nothing`,
        approval: this.toRecord(current),
      };
    }, DURABLE);
  }

  /** Marks every pending approval whose deadline is at or before `now` as expired (audited). */
  expireDue(now: number = this.ctx.clock()): ApprovalRecord[] {
    assertWritable(this.ctx, 'approvals.expireDue');
    return this.ctx.tx.run(
      () => this.due.all(now).map((row) => this.toRecord(this.expireRow(row, now))),
      DURABLE,
    );
  }

  /**
   * Withdraws every pending approval of `runId` because its run ended without it (cancelled,
   * failed): each is marked `expired` now, audited with `withdrawn` saying why, so the Inbox
   * no longer offers a decision that could resume nothing. Returns the withdrawn requests.
   */
  withdrawForRun(runId: string, why: string, now: number = this.ctx.clock()): ApprovalRecord[] {
    assertWritable(this.ctx, 'approvals.withdrawForRun');
    parseInput(Id, runId, 'approvals.withdrawForRun runId', this.ctx.redactor);
    // Most runs end with nothing pending: no transaction (and no fsync) for them.
    if (this.pendingOfRun.all(runId).length === 0) return [];
    return this.ctx.tx.run(
      () =>
        (this.pendingOfRun.all(runId) as ApprovalRow[]).map((row) => {
          this.expireStmt.run(now, row.id);
          const withdrawn: ApprovalRow = { ...row, status: ApprovalStatus.expired, decided_at: now };
          this.record(withdrawn, AuditKind.approvalResolved, now, { withdrawn: why });
          return this.toRecord(withdrawn);
        }),
      DURABLE,
    );
  }

  /** Pending approvals, oldest first, filtered by session, task and/or agent. */
  listPending(filter: PendingFilter = {}): ApprovalRecord[] {
    return this.pending
      .all({ session: filter.sessionId ?? null, task: filter.taskId ?? null, agent: filter.agentId ?? null })
      .map((row) => this.toRecord(row as ApprovalRow));
  }

  /** The pending approvals of one run, oldest first. */
  pendingOfRunIds(runId: string): string[] {
    return (this.pendingOfRun.all(runId) as ApprovalRow[]).map((row) => row.id);
  }

  /** The ids of every pending approval: one indexed query, no row decoding (for cheap polling). */
  pendingIds(): Set<string> {
    return new Set(this.pendingIdsStmt.all().map((r) => r.id));
  }

  /** One approval by request id, or null. */
  get(id: string): ApprovalRecord | null {
    const row = this.byId.get(id);
    return row ? this.toRecord(row) : null;
  }

  /** The approval of one tool call, or null. */
  getByCall(callId: string): ApprovalRecord | null {
    const row = this.byCall.get(callId);
    return row ? this.toRecord(row) : null;
  }

  private expireRow(row: ApprovalRow, now: number): ApprovalRow {
    this.expireStmt.run(now, row.id);
    const expired: ApprovalRow = { ...row, status: ApprovalStatus.expired, decided_at: now };
    this.record(expired, AuditKind.approvalResolved, now, { expiresAt: row.expires_at });
    return expired;
  }

  private record(row: ApprovalRow, kind: AuditKind, at: number, detail: Record<string, unknown>): void {
    const event = newAuditRecord(kind, at, {
      approvalId: row.id,
      taskId: row.task_id,
      parentAgentId: row.parent_agent_id,
      ...detail,
    });
    event.sessionId = row.session_id;
    event.agentId = row.agent_id;
    event.surface = row.surface;
    event.runId = row.run_id;
    // A budget request is no tool call: its events carry the request's id in their detail only.
    event.callId = row.kind === 'budget' ? null : callIdInRun(row);
    event.tool = row.tool;
    event.risk = row.risk as ApprovalRecord['risk'];
    event.ruleId = row.rule_id;
    event.resource = row.target;
    event.status = row.status;
    this.audit.record(event);
  }

  private toRecord(row: ApprovalRow): ApprovalRecord {
    return {
      id: row.id,
      v: row.v,
      // A row read from a file opened read-only before version 14 has no kind: it asks for a tool call.
      kind: row.kind ?? 'tool',
      callId: row.call_id,
      runId: row.run_id,
      sessionId: row.session_id,
      taskId: row.task_id,
      agentId: row.agent_id,
      parentAgentId: row.parent_agent_id,
      parentRunId: row.parent_run_id,
      surface: row.surface,
      tool: row.tool,
      args: fromStoredJson(this.ctx, row.args, `approvals[${row.id}].args`),
      target: row.target,
      risk: row.risk as ApprovalRecord['risk'],
      reason: row.reason as ApprovalRecord['reason'],
      ruleId: row.rule_id,
      idempotencyKey: row.idempotency_key,
      resumeCheckpoint: fromStoredJson(
        this.ctx,
        row.resume_checkpoint,
        `approvals[${row.id}].resume_checkpoint`,
      ),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      status: row.status,
      decidedBy: row.decided_by,
      decidedAt: row.decided_at,
      decisionReason: row.decision_reason ?? null,
      argsHash: row.args_hash ?? null,
      policyHash: row.policy_hash ?? null,
      decidedSurface: row.decided_surface ?? null,
      decidedNode: row.decided_node ?? null,
    };
  }
}

/**
 * The surface a decision came through, from the decider's identity as the surfaces spell it
 * (`local:<user>` is the CLI, `sidecar:<user>` the sidecar and the web app, `<surface>:<who>`
 * otherwise); `api` for an in-process caller with a bare name.
 */
export function decidingSurface(user: string): string {
  const colon = user.indexOf(':');
  if (colon <= 0) return 'api';
  const prefix = user.slice(0, colon);
  return prefix === 'local' ? 'cli' : prefix;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The call id as every other audit event of the run carries it (`c1`). The approval row keys
 * the call as `<runId>:<callId>` because call ids are unique only within a run.
 */
function callIdInRun(row: ApprovalRow): string {
  const prefix = row.run_id === null ? null : `${row.run_id}:`;
  return prefix !== null && row.call_id.startsWith(prefix) ? row.call_id.slice(prefix.length) : row.call_id;
}
