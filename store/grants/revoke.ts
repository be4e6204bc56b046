import type { Database } from 'better-sqlite3';
import { StateErrorCode, StoreStateError, quote } from '../errors.ts';
import type { StringScrubber } from '../errors.ts';

/** The columns both grant tables share. */
export interface GrantRow {
  id: string;
  v: number;
  tool: string;
  target: string | null;
  granted_by: string;
  created_at: number;
  revoked_at: number | null;
  revoked_by: string | null;
}

/**
 * Revokes one row of `table` (inside the caller's transaction): throws `grant_not_found` for an
 * unknown id and `grant_already_revoked` for a revoked one; returns the row after the change.
 */
export function revokeRow<Row extends GrantRow>(
  db: Database,
  table: 'session_approvals' | 'standing_approvals',
  id: string,
  revokedBy: string,
  at: number,
  scrubber: StringScrubber,
): Row {
  const row = db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Row | undefined;
  if (!row) {
    throw new StoreStateError(
      StateErrorCode.grantNotFound,
      `${table}: no grant with id ${quote(id, scrubber)}; nothing was revoked`,
      { table },
    );
  }
  if (row.revoked_at !== null) {
    throw new StoreStateError(
      StateErrorCode.grantAlreadyRevoked,
      `${table}: grant ${quote(id, scrubber)} was already revoked by ${quote(row.revoked_by, scrubber)} at ` +
        `${new Date(row.revoked_at).toISOString()}`,
      { table, id: row.id, revokedAt: row.revoked_at },
    );
  }
  db.prepare(`UPDATE ${table} SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL`).run(
    at,
    revokedBy,
    id,
  );
  return { ...row, revoked_at: at, revoked_by: revokedBy };
}
