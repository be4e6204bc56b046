import type { Database, Statement } from 'better-sqlite3';
import type { AuditLog, AuditRecord } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, fromStoredJson, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { StateErrorCode, StoreStateError, quote } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { BeginCallInput, CallStatus, LEDGER_RECORD_VERSION, fastBeginCallInput } from './types.ts';
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
  /** Reads go through `tool_calls`: the table in versions 1–2, a view over the three in 3. */
  private readonly byKey: Statement<[string], LedgerRow>;
  private readonly writes: LedgerWrites | null;
  /**
   * The rows of calls this connection started and has not finished: their identity is needed
   * for the audit event that finishes them, and reading it back costs more than the write.
   * Identity never changes after the insert; the database still decides every transition.
   */
  private readonly inFlight = new Map<string, LedgerRow>();

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
  ) {
    this.byKey = ctx.db.prepare('SELECT * FROM tool_calls WHERE idempotency_key = ?');
    this.writes = ctx.readonly ? null : prepareWrites(ctx.db);
  }

  /**
   * Writes the `started` row and the audit `started` event in one transaction, before the tool
   * runs. When the key already has a row nothing is written and that row is returned
   * (`created: false`): the caller must not execute again.
   */
  beginCall(input: BeginCallInput, options: BeginCallOptions = {}): BeginCallResult {
    assertWritable(this.ctx, 'ledger.beginCall');
    const call = parseInput(BeginCallInput, input, 'ledger.beginCall', this.ctx.redactor, fastBeginCallInput);
    return this.ctx.tx.op(
      'ledger.beginCall',
      (): BeginCallResult => {
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
        const writes = this.mustWrite('ledger.beginCall');
        const inserted = writes.insertCall.run(
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
          row.attempt,
          row.started_at,
        );
        if (inserted.changes === 0) {
          return { created: false, entry: this.toEntry(this.byKey.get(row.idempotency_key) as LedgerRow) };
        }
        writes.open.run(row.idempotency_key, row.started_at);
        this.remember(row);
        this.audit.record(
          auditRecord(row, AuditKind.started, row.started_at, {
            ...asObject(call.detail),
            idempotencyKey: row.idempotency_key,
            attempt: 1,
          }),
        );
        return { created: true, entry: this.toEntry(row) };
      },
      options,
    );
  }

  /**
   * Cluster mode: the outcome of a call another node made (that node ran it, or died running it),
   * with no `started` row or event: one `call_elsewhere` event names the node and the outcome.
   * Replays reuse the row like any other. `created: false` (nothing written) when the key has a row.
   */
  recordElsewhere(
    input: BeginCallInput,
    outcome: {
      readonly status: 'completed' | 'failed' | 'interrupted';
      readonly node: string;
      readonly stored: unknown;
    },
  ): BeginCallResult {
    const where = 'ledger.recordElsewhere';
    assertWritable(this.ctx, where);
    const call = parseInput(BeginCallInput, input, where, this.ctx.redactor, fastBeginCallInput);
    const redacted = this.ctx.redactor.redact(outcome.stored ?? null);
    const text = JSON.stringify(redacted) ?? 'null';
    const result = outcome.status === CallStatus.completed ? text : null;
    const error = outcome.status === CallStatus.failed ? text : null;
    return this.ctx.tx.op(where, (): BeginCallResult => {
      const at = call.at ?? this.ctx.clock();
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
        status: outcome.status,
        attempt: 1,
        result,
        error,
        started_at: at,
        finished_at: at,
      };
      const writes = this.mustWrite(where);
      const inserted = writes.insertCall.run(
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
        row.attempt,
        row.started_at,
      );
      if (inserted.changes === 0)
        return { created: false, entry: this.toEntry(this.byKey.get(row.idempotency_key) as LedgerRow) };
      writes.outcome.run(row.idempotency_key, row.attempt, outcome.status, result, error, at);
      const event = auditRecord(row, AuditKind.callElsewhere, at, {
        idempotencyKey: row.idempotency_key,
        node: outcome.node,
        ...(outcome.status === CallStatus.failed ? { error: redacted } : {}),
      });
      event.status = outcome.status;
      this.audit.record(event);
      return {
        created: true,
        entry: this.toEntry(row, {
          result: outcome.status === CallStatus.completed ? redacted : null,
          error: outcome.status === CallStatus.failed ? redacted : null,
        }),
      };
    });
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
    return this.ctx.tx.op('ledger.markInterrupted', () => {
      const at = options.at ?? this.ctx.clock();
      const writes = this.mustWrite('ledger.markInterrupted');
      const rows = options.runId === undefined ? writes.openAll.all() : writes.openOfRun.all(options.runId);
      return rows.map((row) => {
        writes.close.run(row.idempotency_key);
        writes.outcome.run(row.idempotency_key, row.attempt, CallStatus.interrupted, null, null, at);
        this.inFlight.delete(row.idempotency_key);
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
    const where = 'ledger.retryInterrupted';
    assertWritable(this.ctx, where);
    // A refusal is decided before anything is written and thrown outside the operation, so it
    // leaves a caller's transaction usable.
    const outcome = this.ctx.tx.op(
      where,
      (): LedgerEntry | LedgerRow | null => {
        const row = this.byKey.get(idempotencyKey);
        if (row === undefined || row.status !== CallStatus.interrupted) return row ?? null;
        const at = options.at ?? this.ctx.clock();
        const attempt = row.attempt + 1;
        const writes = this.mustWrite(where);
        writes.restart.run(attempt, idempotencyKey);
        writes.open.run(idempotencyKey, at);
        const started: LedgerRow = {
          ...row,
          status: CallStatus.started,
          attempt,
          result: null,
          error: null,
          finished_at: null,
        };
        this.remember(started);
        this.audit.record(auditRecord(row, AuditKind.started, at, { idempotencyKey, attempt, retry: true }));
        return this.toEntry(started);
      },
      { durable: options.durable === true },
    );
    if (outcome !== null && !isRow(outcome)) return outcome;
    if (outcome === null) throw this.notFound(where, idempotencyKey);
    throw new StoreStateError(
      StateErrorCode.callNotInterrupted,
      `${where}: call ${quote(idempotencyKey, this.ctx.redactor)} is ${outcome.status}, not interrupted`,
      { idempotencyKey, status: outcome.status },
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
    // A refusal is decided before anything is written and thrown outside the operation.
    const entry = this.ctx.tx.op(where, (): LedgerEntry | null => {
      const at = options.at ?? this.ctx.clock();
      const writes = this.mustWrite(where);
      // Only a call in flight has an open row: removing it is the check and the transition.
      if (writes.close.run(key).changes === 0) return null;
      const started = this.inFlight.get(key) ?? this.byKey.get(key);
      this.inFlight.delete(key);
      if (started === undefined) throw this.notFound(where, key);
      // The primary key (key, attempt) refuses a second outcome for the same attempt.
      writes.outcome.run(key, started.attempt, status, result, error, at);
      const row: LedgerRow = { ...started, status, result, error, finished_at: at };
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
    if (entry !== null) return entry;
    const current = this.byKey.get(key);
    if (current === undefined) throw this.notFound(where, key);
    throw new StoreStateError(
      StateErrorCode.callNotStarted,
      `${where}: call ${quote(key, this.ctx.redactor)} is ${current.status}, not started; nothing was written`,
      { idempotencyKey: key, status: current.status },
    );
  }

  /** Keeps a started row's identity for its finish; bounded, oldest forgotten first. */
  private remember(row: LedgerRow): void {
    this.inFlight.delete(row.idempotency_key);
    this.inFlight.set(row.idempotency_key, row);
    if (this.inFlight.size > IN_FLIGHT_CACHE) {
      const oldest = this.inFlight.keys().next();
      if (oldest.done !== true) this.inFlight.delete(oldest.value);
    }
  }

  private mustWrite(where: string): LedgerWrites {
    if (this.writes === null) {
      throw new StoreStateError(
        StateErrorCode.readonlyStore,
        `${where}: ${this.ctx.file} was opened read-only`,
      );
    }
    return this.writes;
  }

  private notFound(where: string, key: string): StoreStateError {
    return new StoreStateError(
      StateErrorCode.callNotFound,
      `${where}: no ledger row for idempotency key ${quote(key, this.ctx.redactor)}; call beginCall first`,
      { idempotencyKey: this.ctx.redactor.redactString(key) },
    );
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

/** Rows remembered for their finish (calls in flight at once are far fewer). */
const IN_FLIGHT_CACHE = 4096;

/** The statements that change the ledger (version 3 tables; none on a read-only open). */
interface LedgerWrites {
  readonly insertCall: Statement<unknown[]>;
  readonly open: Statement<[string, number]>;
  readonly close: Statement<[string]>;
  readonly outcome: Statement<[string, number, CallStatus, string | null, string | null, number]>;
  readonly restart: Statement<[number, string]>;
  readonly openAll: Statement<[], LedgerRow>;
  readonly openOfRun: Statement<[string], LedgerRow>;
}

function prepareWrites(db: Database): LedgerWrites {
  const openRows = `SELECT c.*, 'started' AS status, NULL AS result, NULL AS error, NULL AS finished_at
    FROM ledger_open o JOIN ledger_calls c ON c.idempotency_key = o.idempotency_key`;
  return {
    insertCall: db.prepare(
      `INSERT INTO ledger_calls (idempotency_key, v, call_id, run_id, session_id, agent_id, surface, tool, risk,
         rule_id, resource, standing_approval_id, attempt, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
    ),
    open: db.prepare('INSERT INTO ledger_open (idempotency_key, started_at) VALUES (?, ?)'),
    close: db.prepare('DELETE FROM ledger_open WHERE idempotency_key = ?'),
    outcome: db.prepare(
      `INSERT INTO ledger_outcomes (idempotency_key, attempt, status, result, error, finished_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    restart: db.prepare('UPDATE ledger_calls SET attempt = ? WHERE idempotency_key = ?'),
    openAll: db.prepare(`${openRows} ORDER BY o.started_at`),
    openOfRun: db.prepare(`${openRows} WHERE c.run_id = ? ORDER BY o.started_at`),
  };
}

/** The audit event of a ledger state change: the row's identity plus kind, time and detail. */
function auditRecord(
  row: LedgerRow,
  kind:
    | typeof AuditKind.started
    | typeof AuditKind.completed
    | typeof AuditKind.failed
    | typeof AuditKind.interrupted
    | typeof AuditKind.callElsewhere,
  at: number,
  detail: Record<string, unknown>,
): AuditRecord {
  const event = newAuditRecord(kind, at, detail);
  event.sessionId = row.session_id;
  event.agentId = row.agent_id;
  event.surface = row.surface;
  event.runId = row.run_id;
  event.callId = row.call_id;
  event.tool = row.tool;
  event.risk = row.risk as AuditRecord['risk'];
  event.ruleId = row.rule_id;
  event.resource = row.resource;
  event.status = kind;
  event.standingApprovalId = row.standing_approval_id;
  return event;
}

/** Tells a stored row (a refusal's subject) from an entry. */
function isRow(value: LedgerEntry | LedgerRow): value is LedgerRow {
  return 'idempotency_key' in value;
}

function asObject(detail: unknown): Record<string, unknown> {
  if (detail === undefined || detail === null) return {};
  return typeof detail === 'object' && !Array.isArray(detail)
    ? (detail as Record<string, unknown>)
    : { detail };
}
