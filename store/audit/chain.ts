import { hash } from 'node:crypto';
import { AUDIT_EVENT_VERSION } from './types.ts';
import type { AuditRow } from './types.ts';

/** The `prevHash` of the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** Why verification stopped at an event. */
export type ChainBreak = 'hash_mismatch' | 'prev_hash_mismatch' | 'seq_gap' | 'unknown_version';

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
 * surface, run_id, call_id, tool, risk, rule_id, resource, status, standing_approval_id, detail.
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

/**
 * The hash of one event: sha256 over the previous hash, a newline and the event's fields as a
 * JSON array in the fixed HashedFields order. Equal content always gives equal bytes.
 */
export function hashFields(prevHash: string, fields: HashedFields): string {
  return hash('sha256', `${prevHash}\n${JSON.stringify(fields)}`, 'hex');
}

/** The hash of a stored row (every column except `hash`; `prev_hash` is hashed in front). */
export function hashEvent(prevHash: string, row: Omit<AuditRow, 'hash' | 'prev_hash'>): string {
  return hashFields(prevHash, [
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
  ]);
}

/**
 * Verifies rows given in seq order: seqs contiguous from 1 (or from `start.seq + 1`), each
 * `prev_hash` equal to the hash before it (GENESIS_HASH or `start.hash` for the first), each
 * `hash` equal to its recomputed hash. Stops at the first broken event.
 */
export function verifyRows(
  rows: Iterable<AuditRow>,
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
    if (row.v !== AUDIT_EVENT_VERSION) {
      return fail('unknown_version', `record version ${row.v} is not one this code can verify`);
    }
    if (row.prev_hash !== prevHash) {
      return fail(
        'prev_hash_mismatch',
        'prev_hash does not match the previous event (chain relinked or spliced)',
      );
    }
    if (hashEvent(row.prev_hash, row) !== row.hash) {
      return fail('hash_mismatch', 'content does not match its hash (event altered)');
    }
    prevHash = row.hash;
    prevSeq = row.seq;
    count++;
  }
  return { ok: true, count, headSeq: prevSeq === 0 ? null : prevSeq, headHash: prevHash };
}
