import type { Database, Statement } from 'better-sqlite3';
import { FIELD, GENESIS_HASH, eventBody, legacyFields } from './chain.ts';
import type { ChainRow } from './chain.ts';
import type { AuditEvent, AuditKind, AuditRow } from './types.ts';

/**
 * How the audit log is read from one table layout: version 3's `audit_log` (body + hash), or
 * the `audit_events` table of versions 1–2, which a read-only open of an older file still sees.
 */
export interface AuditReader {
  /** Events after `afterSeq`, of one run or all, at most `limit` (-1: no limit), in seq order. */
  events(runId: string | undefined, afterSeq: number, limit: number): Iterable<AuditEvent>;
  /** Rows after `afterSeq` in seq order, as verification needs them. */
  chain(afterSeq: number): Iterable<ChainRow>;
  /** The last event's seq and hash (hex), or undefined for an empty log. */
  head(): { seq: number; hash: string } | undefined;
}

/** The layout's reader for a database at `schemaVersion`. */
export function auditReader(db: Database, schemaVersion: number): AuditReader {
  return schemaVersion >= 3 ? new BodyReader(db) : new LegacyReader(db);
}

interface BodyRow {
  seq: number;
  run_id: string | null;
  body: string;
  hash: Buffer;
  prev?: Buffer | null;
}

/** Version 3: each row holds the hashed body; the previous hash is the previous row's. */
class BodyReader implements AuditReader {
  private readonly all: Statement<[number, number], BodyRow>;
  private readonly byRun: Statement<[string, number, number], BodyRow>;
  private readonly rows: Statement<[number], BodyRow>;
  private readonly tail: Statement<[], BodyRow>;

  constructor(db: Database) {
    const prev = '(SELECT p.hash FROM audit_log p WHERE p.seq = a.seq - 1) AS prev';
    this.all = db.prepare(
      `SELECT a.seq, a.run_id, a.body, a.hash, ${prev} FROM audit_log a WHERE a.seq > ? ORDER BY a.seq LIMIT ?`,
    );
    this.byRun = db.prepare(
      `SELECT a.seq, a.run_id, a.body, a.hash, ${prev} FROM audit_log a
       WHERE a.run_id = ? AND a.seq > ? ORDER BY a.seq LIMIT ?`,
    );
    this.rows = db.prepare('SELECT seq, run_id, body, hash FROM audit_log WHERE seq > ? ORDER BY seq');
    this.tail = db.prepare('SELECT seq, run_id, body, hash FROM audit_log ORDER BY seq DESC LIMIT 1');
  }

  *events(runId: string | undefined, afterSeq: number, limit: number): Iterable<AuditEvent> {
    const rows =
      runId === undefined ? this.all.iterate(afterSeq, limit) : this.byRun.iterate(runId, afterSeq, limit);
    for (const row of rows) yield bodyEvent(row);
  }

  *chain(afterSeq: number): Iterable<ChainRow> {
    for (const row of this.rows.iterate(afterSeq)) {
      yield { seq: row.seq, body: row.body, hash: row.hash.toString('hex'), runId: row.run_id };
    }
  }

  head(): { seq: number; hash: string } | undefined {
    const row = this.tail.get();
    return row && { seq: row.seq, hash: row.hash.toString('hex') };
  }
}

/** Versions 1–2: one column per field and a stored `prev_hash`. */
class LegacyReader implements AuditReader {
  private readonly all: Statement<[number, number], AuditRow>;
  private readonly byRun: Statement<[string, number, number], AuditRow>;
  private readonly rows: Statement<[number], AuditRow>;
  private readonly tail: Statement<[], { seq: number; hash: string }>;

  constructor(db: Database) {
    this.all = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?');
    this.byRun = db.prepare('SELECT * FROM audit_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?');
    this.rows = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq');
    this.tail = db.prepare('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1');
  }

  *events(runId: string | undefined, afterSeq: number, limit: number): Iterable<AuditEvent> {
    const rows =
      runId === undefined ? this.all.iterate(afterSeq, limit) : this.byRun.iterate(runId, afterSeq, limit);
    for (const row of rows) yield legacyEvent(row);
  }

  *chain(afterSeq: number): Iterable<ChainRow> {
    for (const row of this.rows.iterate(afterSeq)) {
      yield { seq: row.seq, body: eventBody(legacyFields(row)), hash: row.hash, prevHash: row.prev_hash };
    }
  }

  head(): { seq: number; hash: string } | undefined {
    return this.tail.get();
  }
}

/** Maps a version-3 row to the public event shape. */
function bodyEvent(row: BodyRow): AuditEvent {
  const fields = parseFields(row.body);
  const text = (i: number): string | null => {
    const value = fields[i];
    return typeof value === 'string' ? value : null;
  };
  const num = (i: number): number => {
    const value = fields[i];
    return typeof value === 'number' ? value : Number.NaN;
  };
  const detailText = text(FIELD.detail);
  return {
    seq: row.seq,
    v: num(FIELD.v),
    at: num(FIELD.at),
    kind: text(FIELD.kind) as AuditKind,
    sessionId: text(FIELD.sessionId),
    agentId: text(FIELD.agentId),
    surface: text(FIELD.surface),
    runId: text(FIELD.runId),
    callId: text(FIELD.callId),
    tool: text(FIELD.tool),
    risk: text(FIELD.risk) as AuditEvent['risk'],
    ruleId: text(FIELD.ruleId),
    resource: text(FIELD.resource),
    status: text(FIELD.status),
    standingApprovalId: text(FIELD.standingApprovalId),
    detail: detailText === null ? null : parseDetail(detailText),
    prevHash: row.prev ? row.prev.toString('hex') : row.seq === 1 ? GENESIS_HASH : '',
    hash: row.hash.toString('hex'),
  };
}

/** Maps a version-1/2 row to the public event shape. */
export function legacyEvent(row: AuditRow): AuditEvent {
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
    detail: parseDetail(row.detail),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** A stored body's fields; a body that is not a JSON array (tampered) reads as no fields. */
function parseFields(body: string): unknown[] {
  try {
    const parsed = JSON.parse(body) as unknown;
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** A detail as data, or as its raw text when it is not JSON. */
function parseDetail(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
