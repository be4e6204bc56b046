import type { Statement } from 'better-sqlite3';
import { assertWritable, toStoredText } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { StateErrorCode, StoreStateError } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { GENESIS_HASH, hashFields, verifyRows } from './chain.ts';
import type { HashedFields } from './chain.ts';
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
  /**
   * The chain's tail as of this transaction generation: inside one write transaction only this
   * connection appends, so it saves a lookup per event; any rollback or new transaction
   * invalidates it.
   */
  private cached = { generation: -1, seq: 0, hash: GENESIS_HASH };

  constructor(private readonly ctx: StoreContext) {
    const db = ctx.db;
    this.tail = db.prepare('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1');
    this.insert = db.prepare(
      `INSERT INTO audit_events (v, seq, at, kind, session_id, agent_id, surface, run_id, call_id, tool, risk,
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
    parsed.at ??= this.ctx.clock();
    return this.ctx.tx.runStatement(() => this.record(parsed as AuditRecord));
  }

  /**
   * @internal Appends an already validated event inside the caller's open transaction, so it
   * commits or rolls back with the state change it describes. For the ledger, the Inbox and the
   * grant stores; everything else uses `append`.
   */
  record(event: AuditRecord): AuditEvent {
    if (!this.ctx.tx.active) {
      throw new StoreStateError(StateErrorCode.durabilityMismatch, 'audit.record needs an open transaction');
    }
    const detail = this.ctx.redactor.redact(event.detail ?? null);
    const generation = this.ctx.tx.generation;
    if (this.cached.generation !== generation) {
      const last = this.tail.get();
      this.cached = { generation, seq: last?.seq ?? 0, hash: last?.hash ?? GENESIS_HASH };
    }
    const prevHash = this.cached.hash;
    // The fields in hash order (see chain.ts), which is also the INSERT column order.
    const fields: HashedFields = [
      AUDIT_EVENT_VERSION,
      this.cached.seq + 1,
      event.at,
      event.kind,
      event.sessionId ?? null,
      event.agentId ?? null,
      event.surface ?? null,
      event.runId ?? null,
      event.callId ?? null,
      event.tool ?? null,
      event.risk ?? null,
      event.ruleId ?? null,
      toStoredText(this.ctx, event.resource),
      event.status ?? null,
      event.standingApprovalId ?? null,
      JSON.stringify(detail) ?? 'null',
    ];
    const hash = hashFields(prevHash, fields);
    this.insert.run(...fields, prevHash, hash);
    this.cached = { generation, seq: fields[1], hash };
    return {
      seq: fields[1],
      v: fields[0],
      at: fields[2],
      kind: event.kind,
      sessionId: fields[4],
      agentId: fields[5],
      surface: fields[6],
      runId: fields[7],
      callId: fields[8],
      tool: fields[9],
      risk: event.risk ?? null,
      ruleId: fields[11],
      resource: fields[12],
      status: fields[13],
      standingApprovalId: fields[14],
      detail,
      prevHash,
      hash,
    };
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
