import type { Database, Statement } from 'better-sqlite3';
import { AUDIT_ROW_EVENTS, FIELD, GENESIS_HASH, eventBody, legacyFields } from './chain.ts';
import type { ChainRow, HashedFields } from './chain.ts';
import { decodeAuditBody } from './encoding.ts';
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
  /** Whether an event of `runId` has this call id and kind (what `events` would show). */
  has(runId: string, callId: string, kind: string): boolean;
}

/** The layout's reader for a database at `schemaVersion`. */
export function auditReader(db: Database, schemaVersion: number): AuditReader {
  return schemaVersion >= 3 ? new BatchReader(db) : new LegacyReader(db);
}

interface BatchRow {
  seq: number;
  last_seq: number;
  run_id: string | null;
  /** The events' JSON text, encoded from schema version 8 on (encoding.ts). */
  body: string;
  hashes: Buffer;
  prev?: Buffer | null;
}

/** An event of a version-3 row: its seq, its body's fields, its own hash and the one before. */
interface RowEvent {
  readonly seq: number;
  readonly fields: unknown[] | null;
  readonly hash: Buffer;
  readonly prev: Buffer | null;
}

/**
 * Version 3: a row holds one or more consecutive events of one run (`seq`..`last_seq`), their
 * bodies as one JSON array and their hashes end to end; the hash before a row's first event is
 * the last one of the row before.
 */
class BatchReader implements AuditReader {
  private readonly all: Statement<[number, number], BatchRow>;
  private readonly byRun: Statement<[string, number, number], BatchRow>;
  private readonly rows: Statement<[number, number], BatchRow>;
  private readonly tail: Statement<[], BatchRow>;
  private readonly runBodies: Statement<[string], Pick<BatchRow, 'run_id' | 'body'>>;

  constructor(db: Database) {
    const prev =
      '(SELECT substr(p.hashes, -32) FROM audit_log p WHERE p.seq < a.seq ORDER BY p.seq DESC LIMIT 1) AS prev';
    // A row holds at most AUDIT_ROW_EVENTS events, so the rows holding events after S start
    // after S - AUDIT_ROW_EVENTS: the primary key finds them.
    const after = `a.seq > ? - ${AUDIT_ROW_EVENTS} AND a.last_seq > ?`;
    this.all = db.prepare(
      `SELECT a.seq, a.last_seq, a.run_id, a.body, a.hashes, ${prev} FROM audit_log a WHERE ${after} ORDER BY a.seq`,
    );
    this.byRun = db.prepare(
      `SELECT a.seq, a.last_seq, a.run_id, a.body, a.hashes, ${prev} FROM audit_log a
       WHERE a.run_id = ? AND ${after} ORDER BY a.seq`,
    );
    this.rows = db.prepare(
      `SELECT a.seq, a.last_seq, a.run_id, a.body, a.hashes FROM audit_log a WHERE ${after} ORDER BY a.seq`,
    );
    this.tail = db.prepare(
      'SELECT seq, last_seq, run_id, body, hashes FROM audit_log ORDER BY seq DESC LIMIT 1',
    );
    this.runBodies = db.prepare('SELECT run_id, body FROM audit_log WHERE run_id = ? ORDER BY seq');
  }

  *events(runId: string | undefined, afterSeq: number, limit: number): Iterable<AuditEvent> {
    const rows =
      runId === undefined
        ? this.all.iterate(afterSeq, afterSeq)
        : this.byRun.iterate(runId, afterSeq, afterSeq);
    let left = limit;
    for (const row of rows) {
      for (const event of rowEvents(row)) {
        if (event.seq <= afterSeq) continue;
        if (left === 0) return;
        left--;
        yield batchEvent(event);
      }
    }
  }

  *chain(afterSeq: number): Iterable<ChainRow> {
    for (const row of this.rows.iterate(afterSeq, afterSeq)) {
      const events = rowEvents(row);
      if (events.length !== row.last_seq - row.seq + 1 || row.hashes.length !== 32 * events.length) {
        // A row whose parts do not agree (only a tampered file has one): it fails verification.
        yield { seq: Math.max(row.seq, afterSeq + 1), fields: null, body: '', hash: '', runId: row.run_id };
        return;
      }
      for (const event of events) {
        if (event.seq <= afterSeq) continue;
        yield {
          seq: event.seq,
          fields: event.fields,
          body: event.fields === null ? '' : eventBody(event.fields as HashedFields),
          hash: event.hash.toString('hex'),
          runId: row.run_id,
        };
      }
    }
  }

  head(): { seq: number; hash: string } | undefined {
    const row = this.tail.get();
    return row && { seq: row.last_seq, hash: row.hashes.subarray(row.hashes.length - 32).toString('hex') };
  }

  has(runId: string, callId: string, kind: string): boolean {
    // The run's rows by its index (`all`: a run has few rows, and an iterator costs more than
    // reading them), their bodies parsed, no event objects built; `events` reads a field of
    // another type as null, so only equal strings match here as there.
    for (const row of this.runBodies.all(runId)) {
      for (const fields of rowBodies(row)) {
        if (Array.isArray(fields) && fields[FIELD.callId] === callId && fields[FIELD.kind] === kind)
          return true;
      }
    }
    return false;
  }
}

/** A row's event bodies as parsed JSON; a body that is not a JSON array (tampered) reads as none. */
function rowBodies(row: Pick<BatchRow, 'run_id' | 'body'>): unknown[] {
  try {
    const bodies = JSON.parse(decodeAuditBody(row.body, row.run_id)) as unknown;
    return Array.isArray(bodies) ? bodies : [];
  } catch {
    return [];
  }
}

/** A row's events, in order. A body that is not a JSON array of arrays (tampered) reads as none. */
function rowEvents(row: BatchRow): RowEvent[] {
  return rowBodies(row).map((fields: unknown, i) => ({
    seq: row.seq + i,
    fields: Array.isArray(fields) ? fields : null,
    hash: row.hashes.subarray(i * 32, i * 32 + 32),
    prev: i === 0 ? (row.prev ?? null) : row.hashes.subarray((i - 1) * 32, i * 32),
  }));
}

/** Versions 1–2: one column per field and a stored `prev_hash`. */
class LegacyReader implements AuditReader {
  private readonly all: Statement<[number, number], AuditRow>;
  private readonly byRun: Statement<[string, number, number], AuditRow>;
  private readonly rows: Statement<[number], AuditRow>;
  private readonly tail: Statement<[], { seq: number; hash: string }>;
  private readonly exists: Statement<[string, string, string], { one: number }>;

  constructor(db: Database) {
    this.all = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?');
    this.exists = db.prepare(
      'SELECT 1 AS one FROM audit_events WHERE run_id = ? AND call_id = ? AND kind = ? LIMIT 1',
    );
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
      const fields = legacyFields(row);
      yield { seq: row.seq, fields, body: eventBody(fields), hash: row.hash, prevHash: row.prev_hash };
    }
  }

  head(): { seq: number; hash: string } | undefined {
    return this.tail.get();
  }

  has(runId: string, callId: string, kind: string): boolean {
    return this.exists.get(runId, callId, kind) !== undefined;
  }
}

/** Maps an event of a version-3 row to the public event shape. */
function batchEvent(event: RowEvent): AuditEvent {
  const fields = event.fields ?? [];
  // Stored JSON is read defensively: a field of the wrong type (a tampered row) reads as null.
  const text = (i: number): string | null => {
    const value = fields[i];
    return typeof value === 'string' ? value : null;
  };
  const num = (i: number): number => {
    const value = fields[i];
    return typeof value === 'number' ? value : Number.NaN;
  };
  const detail = text(FIELD.detail);
  const prevHash = event.prev ? event.prev.toString('hex') : event.seq === 1 ? GENESIS_HASH : '';
  return eventOf(
    event.seq,
    [
      num(FIELD.v),
      num(FIELD.seq),
      num(FIELD.at),
      text(FIELD.kind) ?? '',
      text(FIELD.sessionId),
      text(FIELD.agentId),
      text(FIELD.surface),
      text(FIELD.runId),
      text(FIELD.callId),
      text(FIELD.tool),
      text(FIELD.risk),
      text(FIELD.ruleId),
      text(FIELD.resource),
      text(FIELD.status),
      text(FIELD.standingApprovalId),
      detail ?? 'null',
    ],
    detail === null ? null : parseDetail(detail),
    prevHash,
    event.hash.toString('hex'),
  );
}

/** Maps a version-1/2 row to the public event shape. */
function legacyEvent(row: AuditRow): AuditEvent {
  return eventOf(row.seq, legacyFields(row), parseDetail(row.detail), row.prev_hash, row.hash);
}

/**
 * The public shape of an event at `seq`, from its hashed fields, its decoded detail and its
 * links: the one mapping for events read back and events just appended.
 */
export function eventOf(
  seq: number,
  fields: HashedFields,
  detail: unknown,
  prevHash: string,
  hash: string,
): AuditEvent {
  return {
    seq,
    v: fields[FIELD.v],
    at: fields[FIELD.at],
    kind: fields[FIELD.kind] as AuditKind,
    sessionId: fields[FIELD.sessionId],
    agentId: fields[FIELD.agentId],
    surface: fields[FIELD.surface],
    runId: fields[FIELD.runId],
    callId: fields[FIELD.callId],
    tool: fields[FIELD.tool],
    risk: fields[FIELD.risk] as AuditEvent['risk'],
    ruleId: fields[FIELD.ruleId],
    resource: fields[FIELD.resource],
    status: fields[FIELD.status],
    standingApprovalId: fields[FIELD.standingApprovalId],
    detail,
    prevHash,
    hash,
  };
}

/** A detail as data, or as its raw text when it is not JSON. */
function parseDetail(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
