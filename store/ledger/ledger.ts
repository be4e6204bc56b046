import type { Statement } from 'better-sqlite3';
import type { AuditLog, AuditRecord } from '../audit/log.ts';
import { AuditKind } from '../audit/types.ts';
import { assertWritable, fromStoredJson, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { StateErrorCode, StoreStateError, quote } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { BeginCallInput, CallStatus, LEDGER_RECORD_VERSION } from './types.ts';
import type { BeginCallOptions, BeginCallResult, LedgerEntry, LedgerRow } from './types.ts';

/** Options of the calls that finish or interrupt a ledger row. */
export interface LedgerTimeOptions {
  /** When it happened (ms since the epoch); defaults to the store clock. */
  readonly at?: number;
}

/**
 * The tool-call ledger: the idempotency record behind "an approved call is executed at most
 * once, a completed call never again" (DESIGN.md §3). Every state change commits in the same
 * transaction as its audit event, so the ledger and the audit trail never disagree.
 */
export class ToolCallLedger {
  private readonly byKey: Statement<[string], LedgerRow>;
  private readonly insert: Statement<unknown[]>;
  private readonly finish: Statement<[CallStatus, string | null, string | null, number, string], LedgerRow>;
  private readonly setStatus: Statement<[CallStatus, number, number | null, string]>;
  private readonly started: Statement<[], LedgerRow>;
  private readonly startedOfRun: Statement<[string], LedgerRow>;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
  ) {
    const db = ctx.db;
    this.byKey = db.prepare('SELECT * FROM tool_calls WHERE idempotency_key = ?');
    this.insert = db.prepare(
      `INSERT INTO tool_calls (idempotency_key, v, call_id, run_id, session_id, agent_id, surface, tool, risk,
         rule_id, resource, standing_approval_id, status, attempt, result, error, started_at, finished_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
    );
    this.finish = db.prepare(
      `UPDATE tool_calls SET status = ?, result = ?, error = ?, finished_at = ?
       WHERE idempotency_key = ? AND status = 'started' RETURNING *`,
    );
    this.setStatus = db.prepare(
      'UPDATE tool_calls SET status = ?, attempt = ?, finished_at = ? WHERE idempotency_key = ?',
    );
    this.started = db.prepare("SELECT * FROM tool_calls WHERE status = 'started' ORDER BY started_at");
    this.startedOfRun = db.prepare(
      "SELECT * FROM tool_calls WHERE status = 'started' AND run_id = ? ORDER BY started_at",
    );
  }

  /**
   * Writes the `started` row and the audit `started` event in one transaction, before the tool
   * runs. When the key already has a row nothing is written and that row is returned
   * (`created: false`): the caller must not execute again.
   */
  beginCall(input: BeginCallInput, options: BeginCallOptions = {}): BeginCallResult {
    assertWritable(this.ctx, 'ledger.beginCall');
    const call = parseInput(BeginCallInput, input, 'ledger.beginCall', this.ctx.redactor);
    return this.ctx.tx.run((): BeginCallResult => {
      const row: LedgerRow = {
        idempotency_key: call.idempotencyKey,
        v: LEDGER_RECORD_VERSION,
        call_id: call.callId,
        run_id: call.runId ?? null,
        session_id: call.sessionId ?? null,
        agent_id: call.agentId ?? null,
        surface: call.surface ?? null,
        tool: call.tool,
        risk: call.risk ?? null,
        rule_id: call.ruleId ?? null,
        resource: toStoredText(this.ctx, call.resource),
        standing_approval_id: call.standingApprovalId ?? null,
        status: CallStatus.started,
        attempt: 1,
        result: null,
        error: null,
        started_at: call.at ?? this.ctx.clock(),
        finished_at: null,
      };
      const inserted = this.insert.run(
        row.idempotency_key,
        row.v,
        row.call_id,
        row.run_id,
        row.session_id,
        row.agent_id,
        row.surface,
        row.tool,
        row.risk,
        row.rule_id,
        row.resource,
        row.standing_approval_id,
        row.status,
        row.attempt,
        row.result,
        row.error,
        row.started_at,
        row.finished_at,
      );
      if (inserted.changes === 0) {
        return { created: false, entry: this.toEntry(this.byKey.get(row.idempotency_key) as LedgerRow) };
      }
      this.audit.record(
        auditRecord(row, AuditKind.started, row.started_at, {
          ...asObject(call.detail),
          idempotencyKey: row.idempotency_key,
          attempt: 1,
        }),
      );
      return { created: true, entry: this.toEntry(row) };
    }, options);
  }

  /** Marks a started call `completed` with its redacted result, with the audit `completed` event. */
  completeCall(idempotencyKey: string, result: unknown, options: LedgerTimeOptions = {}): LedgerEntry {
    return this.finishCall('ledger.completeCall', idempotencyKey, CallStatus.completed, result, options);
  }

  /** Marks a started call `failed` with its redacted error, with the audit `failed` event. */
  failCall(idempotencyKey: string, error: unknown, options: LedgerTimeOptions = {}): LedgerEntry {
    return this.finishCall('ledger.failCall', idempotencyKey, CallStatus.failed, error, options);
  }

  /**
   * At restore: every `started` row (of one run, or all) becomes `interrupted`, each with an
   * audit `interrupted` event, in one transaction. Returns the interrupted entries; whether one
   * may be retried depends on the tool (see `retryInterrupted`).
   */
  markInterrupted(options: LedgerTimeOptions & { readonly runId?: string } = {}): LedgerEntry[] {
    assertWritable(this.ctx, 'ledger.markInterrupted');
    return this.ctx.tx.run(() => {
      const at = options.at ?? this.ctx.clock();
      const rows = options.runId === undefined ? this.started.all() : this.startedOfRun.all(options.runId);
      return rows.map((row) => {
        this.setStatus.run(CallStatus.interrupted, row.attempt, at, row.idempotency_key);
        this.audit.record(
          auditRecord(row, AuditKind.interrupted, at, {
            idempotencyKey: row.idempotency_key,
            attempt: row.attempt,
          }),
        );
        return this.toEntry({ ...row, status: CallStatus.interrupted, finished_at: at });
      });
    });
  }

  /**
   * Starts an `interrupted` call again (attempt + 1) with an audit `started` event. Only for
   * tools that are idempotent or accept the idempotency key; the caller decides that.
   */
  retryInterrupted(idempotencyKey: string, options: LedgerTimeOptions & BeginCallOptions = {}): LedgerEntry {
    assertWritable(this.ctx, 'ledger.retryInterrupted');
    return this.ctx.tx.run(
      () => {
        const row = this.mustGet('ledger.retryInterrupted', idempotencyKey);
        if (row.status !== CallStatus.interrupted) {
          throw new StoreStateError(
            StateErrorCode.callNotInterrupted,
            `ledger.retryInterrupted: call ${quote(idempotencyKey, this.ctx.redactor)} is ${row.status}, not interrupted`,
            { idempotencyKey, status: row.status },
          );
        }
        const at = options.at ?? this.ctx.clock();
        const attempt = row.attempt + 1;
        this.setStatus.run(CallStatus.started, attempt, null, idempotencyKey);
        this.audit.record(auditRecord(row, AuditKind.started, at, { idempotencyKey, attempt, retry: true }));
        return this.toEntry({ ...row, status: CallStatus.started, attempt, finished_at: null });
      },
      { durable: options.durable === true },
    );
  }

  /**
   * "Already done? Here is the stored result": one primary-key lookup. Null when the key was
   * never started.
   */
  lookup(idempotencyKey: string): LedgerEntry | null {
    const row = this.byKey.get(idempotencyKey);
    return row ? this.toEntry(row) : null;
  }

  private finishCall(
    where: string,
    key: string,
    status: typeof CallStatus.completed | typeof CallStatus.failed,
    payload: unknown,
    options: LedgerTimeOptions,
  ): LedgerEntry {
    assertWritable(this.ctx, where);
    // Redact before the transaction: the write lock is held only for the writes.
    const redacted = this.ctx.redactor.redact(payload ?? null);
    const text = JSON.stringify(redacted) ?? 'null';
    const result = status === CallStatus.completed ? text : null;
    const error = status === CallStatus.failed ? text : null;
    return this.ctx.tx.run(() => {
      const at = options.at ?? this.ctx.clock();
      // One conditional UPDATE: only a `started` row changes; anything else is reported below.
      const row = this.finish.get(status, result, error, at, key);
      if (row === undefined) {
        const current = this.mustGet(where, key);
        throw new StoreStateError(
          StateErrorCode.callNotStarted,
          `${where}: call ${quote(key, this.ctx.redactor)} is ${current.status}, not started; nothing was written`,
          { idempotencyKey: key, status: current.status },
        );
      }
      this.audit.record(
        auditRecord(
          row,
          status === CallStatus.completed ? AuditKind.completed : AuditKind.failed,
          at,
          status === CallStatus.completed
            ? { idempotencyKey: key, attempt: row.attempt }
            : { idempotencyKey: key, attempt: row.attempt, error: redacted },
        ),
      );
      return this.toEntry(
        row,
        status === CallStatus.completed
          ? { result: redacted, error: null }
          : { result: null, error: redacted },
      );
    });
  }

  private mustGet(where: string, key: string): LedgerRow {
    const row = this.byKey.get(key);
    if (!row) {
      throw new StoreStateError(
        StateErrorCode.callNotFound,
        `${where}: no ledger row for idempotency key ${quote(key, this.ctx.redactor)}; call beginCall first`,
        { idempotencyKey: this.ctx.redactor.redactString(key) },
      );
    }
    return row;
  }

  private toEntry(row: LedgerRow, parsed?: { result: unknown; error: unknown }): LedgerEntry {
    const where = `tool_calls[${row.idempotency_key}]`;
    return {
      idempotencyKey: row.idempotency_key,
      callId: row.call_id,
      runId: row.run_id,
      sessionId: row.session_id,
      agentId: row.agent_id,
      surface: row.surface,
      tool: row.tool,
      risk: row.risk as LedgerEntry['risk'],
      ruleId: row.rule_id,
      resource: row.resource,
      standingApprovalId: row.standing_approval_id,
      status: row.status,
      attempt: row.attempt,
      result: parsed ? parsed.result : fromStoredJson(this.ctx, row.result, `${where}.result`),
      error: parsed ? parsed.error : fromStoredJson(this.ctx, row.error, `${where}.error`),
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    };
  }
}

/** The audit event of a ledger state change: the row's identity plus kind, time and detail. */
function auditRecord(
  row: LedgerRow,
  kind:
    | typeof AuditKind.started
    | typeof AuditKind.completed
    | typeof AuditKind.failed
    | typeof AuditKind.interrupted,
  at: number,
  detail: Record<string, unknown>,
): AuditRecord {
  return {
    kind,
    at,
    sessionId: row.session_id,
    agentId: row.agent_id,
    surface: row.surface,
    runId: row.run_id,
    callId: row.call_id,
    tool: row.tool,
    risk: row.risk as AuditRecord['risk'],
    ruleId: row.rule_id,
    resource: row.resource,
    status: kind,
    standingApprovalId: row.standing_approval_id,
    detail,
  };
}

function asObject(detail: unknown): Record<string, unknown> {
  if (detail === undefined || detail === null) return {};
  return typeof detail === 'object' && !Array.isArray(detail)
    ? (detail as Record<string, unknown>)
    : { detail };
}
