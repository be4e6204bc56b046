import { hash } from 'node:crypto';
import { AUDIT_EVENT_VERSION } from './types.ts';
import type { AuditRow } from './types.ts';

/** The `prevHash` of the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** Why verification stopped at an event. */
export type ChainBreak =
  'hash_mismatch' | 'prev_hash_mismatch' | 'seq_gap' | 'unknown_version' | 'row_mismatch';

/** Result of walking the chain. */
export type ChainVerification =
  | {
      readonly ok: true;
      /** Events verified. */
      readonly count: number;
      /** The last event's seq and hash (null and GENESIS_HASH for an empty log). */
      readonly headSeq: number | null;
      readonly headHash: string;
    }
  | {
      readonly ok: false;
      /** Events verified before the break. */
      readonly count: number;
      /** The first event that does not verify. */
      readonly brokenSeq: number;
      readonly reason: ChainBreak;
      readonly message: string;
    };

/**
 * The hashed content of an event, in this fixed order: v, seq, at, kind, session_id, agent_id,
 * surface, run_id, call_id, tool, risk, rule_id, resource, status, standing_approval_id, detail
 * (the redacted detail as JSON text).
 */
export type HashedFields = [
  v: number,
  seq: number,
  at: number,
  kind: string,
  sessionId: string | null,
  agentId: string | null,
  surface: string | null,
  runId: string | null,
  callId: string | null,
  tool: string | null,
  risk: string | null,
  ruleId: string | null,
  resource: string | null,
  status: string | null,
  standingApprovalId: string | null,
  detail: string,
];

/** At most this many events share one `audit_log` row (schema version 3). */
export const AUDIT_ROW_EVENTS = 64;

/** Index of each field in HashedFields, for readers of a stored body. */
export const FIELD = {
  v: 0,
  seq: 1,
  at: 2,
  kind: 3,
  sessionId: 4,
  agentId: 5,
  surface: 6,
  runId: 7,
  callId: 8,
  tool: 9,
  risk: 10,
  ruleId: 11,
  resource: 12,
  status: 13,
  standingApprovalId: 14,
  detail: 15,
} as const;

/** An event's canonical content: the JSON array of its fields. Equal content, equal bytes. */
export function eventBody(fields: HashedFields): string {
  return JSON.stringify(fields);
}

/** The hash of one event: sha256 (hex) over the previous hash, a newline and its body. */
export function hashBody(prevHash: string, body: string): string {
  return hash('sha256', `${prevHash}\n${body}`, 'hex');
}

/** The hashed fields of a row of the version-1/2 `audit_events` table (or its view). */
export function legacyFields(row: Omit<AuditRow, 'hash' | 'prev_hash'>): HashedFields {
  return [
    row.v,
    row.seq,
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
  ];
}

/** The hash of a version-1/2 row (every column except `hash`; `prev_hash` is hashed in front). */
export function hashEvent(prevHash: string, row: Omit<AuditRow, 'hash' | 'prev_hash'>): string {
  return hashBody(prevHash, eventBody(legacyFields(row)));
}

/** One stored event as verification sees it, whatever the table layout. */
export interface ChainRow {
  /** The event's position in the log. */
  readonly seq: number;
  /** Its fields as stored, already decoded; null when they are not an array (a tampered row). */
  readonly fields: readonly unknown[] | null;
  /** The hashed content: the fields' canonical JSON (`eventBody`). */
  readonly body: string;
  /** The stored hash, hex. */
  readonly hash: string;
  /** The stored link to the previous event, where the layout keeps one (versions 1–2). */
  readonly prevHash?: string;
  /** The row's indexed run id, where the layout keeps one beside the body (version 3). */
  readonly runId?: string | null;
}

/**
 * Verifies rows given in seq order: seqs contiguous from 1 (or from `start.seq + 1`); each
 * body of a known version, naming its own seq and run; each stored link (where kept) equal
 * to the hash before it; each hash equal to the one recomputed over the previous hash
 * (GENESIS_HASH or `start.hash` for the first) and the body. Stops at the first broken event.
 */
export function verifyRows(
  rows: Iterable<ChainRow>,
  start: { readonly seq: number; readonly hash: string } = { seq: 0, hash: GENESIS_HASH },
): ChainVerification {
  let count = 0;
  let prevHash = start.hash;
  let prevSeq = start.seq;
  for (const row of rows) {
    const fail = (reason: ChainBreak, message: string): ChainVerification => ({
      ok: false,
      count,
      brokenSeq: row.seq,
      reason,
      message: `audit event seq ${row.seq}: ${message}`,
    });
    if (row.seq !== prevSeq + 1) {
      return fail('seq_gap', `expected seq ${prevSeq + 1} after ${prevSeq}; events are missing or reordered`);
    }
    const fields = row.fields;
    if (fields === null) return fail('hash_mismatch', 'content is not a valid event body (event altered)');
    if (fields[FIELD.v] !== AUDIT_EVENT_VERSION) {
      return fail(
        'unknown_version',
        `record version ${String(fields[FIELD.v])} is not one this code can verify`,
      );
    }
    if (fields[FIELD.seq] !== row.seq || (row.runId !== undefined && fields[FIELD.runId] !== row.runId)) {
      return fail(
        'row_mismatch',
        'the row is filed under a seq or run its content does not name (event moved)',
      );
    }
    if (row.prevHash !== undefined && row.prevHash !== prevHash) {
      return fail(
        'prev_hash_mismatch',
        'prev_hash does not match the previous event (chain relinked or spliced)',
      );
    }
    if (hashBody(prevHash, row.body) !== row.hash) {
      return fail(
        'hash_mismatch',
        'content does not match its hash (this event was altered, or the one before it was rewritten)',
      );
    }
    prevHash = row.hash;
    prevSeq = row.seq;
    count++;
  }
  return { ok: true, count, headSeq: prevSeq === 0 ? null : prevSeq, headHash: prevHash };
}
