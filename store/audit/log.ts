import type { Statement } from 'better-sqlite3';
import { assertWritable, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { StateErrorCode, StoreStateError } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { GENESIS_HASH, hashEvent, verifyRows } from './chain.ts';
import type { ChainVerification } from './chain.ts';
import { AUDIT_EVENT_VERSION, AuditEventInput } from './types.ts';
import type { AuditEvent, AuditFields, AuditKind, AuditRow } from './types.ts';

/** An event as the store's own parts record it: fields already validated. */
export interface AuditRecord extends AuditFields {
  readonly kind: AuditKind;
  readonly at: number;
  readonly detail?: unknown;
}

/** Filters for reading the log. */
export interface AuditQuery {
  /** Only events of this run. */
  readonly runId?: string;
  /** Only events with a seq greater than this. */
  readonly afterSeq?: number;
  /** At most this many events (default: all). */
  readonly limit?: number;
}

/**
 * The append-only, hash-chained audit log. Events are never updated or deleted (SQLite
 * triggers refuse it); each stores the sha256 of the previous event's hash and its own
 * content, so `verifyChain` finds the first altered, removed or spliced event. Truncating the
 * tail is not detectable from the file alone: compare `verifyChain().headSeq` with a copy kept
 * elsewhere if that matters.
 */
export class AuditLog {
  private readonly tail: Statement<[], { seq: number; hash: string }>;
  private readonly insert: Statement<unknown[]>;
  private readonly all: Statement<[number, number]>;
  private readonly byRun: Statement<[string, number, number]>;
  private readonly ordered: Statement<[]>;
  private readonly after: Statement<[number]>;

  constructor(private readonly ctx: StoreContext) {
    const db = ctx.db;
    this.tail = db.prepare('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1');
    this.insert = db.prepare(
      `INSERT INTO audit_events (seq, v, at, kind, session_id, agent_id, surface, run_id, call_id, tool, risk,
         rule_id, resource, status, standing_approval_id, detail, prev_hash, hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.all = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?');
    this.byRun = db.prepare('SELECT * FROM audit_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?');
    this.ordered = db.prepare('SELECT * FROM audit_events ORDER BY seq');
    this.after = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq');
  }

  /** Validates, redacts and appends one event in its own transaction (or the caller's). */
  append(input: AuditEventInput): AuditEvent {
    assertWritable(this.ctx, 'audit.append');
    const parsed = parseInput(AuditEventInput, input, 'audit.append', this.ctx.redactor);
    return this.ctx.tx.run(() => this.record({ ...parsed, at: parsed.at ?? this.ctx.clock() }));
  }

  /**
   * Appends an event inside the caller's open transaction, so it commits or rolls back with the
   * state change it describes. Used by the ledger, the Inbox and the grant stores.
   */
  record(event: AuditRecord): AuditEvent {
    if (!this.ctx.tx.active) {
      throw new StoreStateError(StateErrorCode.durabilityMismatch, 'audit.record needs an open transaction');
    }
    const detail = this.ctx.redactor.redact(event.detail ?? null);
    const last = this.tail.get();
    const prevHash = last?.hash ?? GENESIS_HASH;
    const content = {
      seq: (last?.seq ?? 0) + 1,
      v: AUDIT_EVENT_VERSION,
      at: event.at,
      kind: event.kind,
      session_id: event.sessionId ?? null,
      agent_id: event.agentId ?? null,
      surface: event.surface ?? null,
      run_id: event.runId ?? null,
      call_id: event.callId ?? null,
      tool: event.tool ?? null,
      risk: event.risk ?? null,
      rule_id: event.ruleId ?? null,
      resource: toStoredText(this.ctx, event.resource),
      status: event.status ?? null,
      standing_approval_id: event.standingApprovalId ?? null,
      detail: JSON.stringify(detail) ?? 'null',
    };
    const row: AuditRow = { ...content, prev_hash: prevHash, hash: hashEvent(prevHash, content) };
    this.insert.run(
      row.seq,
      row.v,
      row.at,
      row.kind,
      row.session_id,
      row.agent_id,
      row.surface,
      row.run_id,
      row.call_id,
      row.tool,
      row.risk,
      row.rule_id,
      row.resource,
      row.status,
      row.standing_approval_id,
      row.detail,
      row.prev_hash,
      row.hash,
    );
    return eventOf(row, detail);
  }

  /** Events in seq order, optionally of one run, after a seq, limited. */
  list(query: AuditQuery = {}): AuditEvent[] {
    return [...this.iterate(query)];
  }

  /** Like `list`, streaming rows from the database instead of loading them all. */
  *iterate(query: AuditQuery = {}): Generator<AuditEvent> {
    const after = query.afterSeq ?? 0;
    const limit = query.limit ?? -1;
    const rows =
      query.runId === undefined
        ? this.all.iterate(after, limit)
        : this.byRun.iterate(query.runId, after, limit);
    for (const row of rows) yield toEvent(row as AuditRow);
  }

  /** The last event's seq and hash, or null for an empty log. */
  head(): { seq: number; hash: string } | null {
    return this.tail.get() ?? null;
  }

  /**
   * Walks the chain from the first event and names the first broken one. Given `from` (the
   * `headSeq` and `headHash` of an earlier successful verification), it verifies only the
   * events after it: incremental checks of a growing log.
   */
  verifyChain(from?: { readonly seq: number; readonly hash: string }): ChainVerification {
    if (from === undefined) return verifyRows(this.ordered.iterate() as Iterable<AuditRow>);
    return verifyRows(this.after.iterate(from.seq) as Iterable<AuditRow>, from);
  }
}

/** Maps a row to the public event shape. */
export function toEvent(row: AuditRow): AuditEvent {
  let detail: unknown;
  try {
    detail = JSON.parse(row.detail) as unknown;
  } catch {
    detail = row.detail;
  }
  return eventOf(row, detail);
}

function eventOf(row: AuditRow, detail: unknown): AuditEvent {
  return {
    seq: row.seq,
    v: row.v,
    at: row.at,
    kind: row.kind as AuditKind,
    sessionId: row.session_id,
    agentId: row.agent_id,
    surface: row.surface,
    runId: row.run_id,
    callId: row.call_id,
    tool: row.tool,
    risk: row.risk as AuditEvent['risk'],
    ruleId: row.rule_id,
    resource: row.resource,
    status: row.status,
    standingApprovalId: row.standing_approval_id,
    detail,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}
