import type { Database } from 'better-sqlite3';
import { AUDIT_ROW_EVENTS, eventBody, legacyFields } from '../audit/chain.ts';
import type { AuditRow } from '../audit/types.ts';
import type { Migration } from './migration.ts';

/**
 * Version 3: fewer bound values and no trigger on the hot path of a tool call.
 *
 * Measured on version 2 (bench/README.md, "Store"): one audited lifecycle cost ~95 bound
 * values over six statements, and the ledger's `BEFORE UPDATE` finality trigger alone cost
 * ~20 % (a table with an update trigger loses SQLite's one-pass UPDATE). Now:
 *
 * - `audit_log` stores events in rows of up to AUDIT_ROW_EVENTS consecutive events of one run
 *   written in one transaction: `body` is the JSON array of the events, each the exact JSON
 *   array its hash covers; `hashes` holds each event's hash (32 bytes each); `seq` and
 *   `last_seq` are the first and last event's seq; `run_id` is the run every event of the row
 *   names (for the run index; verification checks they agree). The chain is still per event;
 *   `prev_hash` is no longer stored (it is the hash before, and the next hash covers it). With
 *   group commit most events cost no row of their own. Old rows become one-event rows
 *   re-encoded byte for byte as they were hashed, so every chain verifies as before (and a
 *   broken one stays broken).
 * - The ledger is insert-only on the hot path: `ledger_calls` (identity and current attempt),
 *   `ledger_outcomes` (one final row per attempt — completed, failed or interrupted — whose
 *   primary key makes a second outcome for the same attempt impossible), `ledger_open` (the
 *   attempts in flight, found at restore without scanning history). Finality is enforced by the
 *   database: outcomes are append-only, and an attempt may be restarted only after an
 *   `interrupted` outcome.
 * - Views with the version-2 names and columns (`audit_events`, `tool_calls`) keep ad-hoc SQL
 *   and read-only tools working; they cannot be written to.
 */
export const compactHotPath: Migration = {
  version: 3,
  name: 'compact-hot-path',
  sql: `
CREATE TABLE audit_log (
  seq INTEGER PRIMARY KEY,
  last_seq INTEGER NOT NULL CHECK (last_seq >= seq AND last_seq - seq < ${AUDIT_ROW_EVENTS}),
  run_id TEXT,
  body TEXT NOT NULL,
  hashes BLOB NOT NULL CHECK (length(hashes) = 32 * (last_seq - seq + 1))
) STRICT;

CREATE TABLE ledger_calls (
  idempotency_key TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  run_id TEXT,
  session_id TEXT,
  agent_id TEXT,
  surface TEXT,
  tool TEXT NOT NULL,
  risk TEXT,
  rule_id TEXT,
  resource TEXT,
  standing_approval_id TEXT,
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  started_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE ledger_outcomes (
  idempotency_key TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('completed', 'failed', 'interrupted')),
  result TEXT,
  error TEXT,
  finished_at INTEGER NOT NULL,
  PRIMARY KEY (idempotency_key, attempt)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledger_open (
  idempotency_key TEXT PRIMARY KEY,
  started_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`,
  transform(db: Database): void {
    copyAudit(db);
    db.exec(COPY_LEDGER);
    db.exec(REPLACE_OLD_TABLES);
  },
};

/** Re-encodes every version-2 audit row as the body its hash was computed over. */
function copyAudit(db: Database): void {
  const insert = db.prepare(
    'INSERT INTO audit_log (seq, last_seq, run_id, body, hashes) VALUES (?, ?, ?, ?, ?)',
  );
  // In pages: a connection cannot write while it iterates, and a long log must not be loaded whole.
  const page = db.prepare('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT 1000');
  let after = Number.NEGATIVE_INFINITY;
  for (;;) {
    const rows = page.all(after) as AuditRow[];
    if (rows.length === 0) return;
    for (const row of rows) {
      insert.run(row.seq, row.seq, row.run_id, `[${eventBody(legacyFields(row))}]`, hashBytes(row.hash));
    }
    after = (rows[rows.length - 1] as AuditRow).seq;
  }
}

/**
 * A stored hex hash as 32 bytes. A hash that is not 64 hex digits (only a tampered file has
 * one) becomes 32 zero bytes: verification then reports that event, instead of the migration
 * refusing the whole file.
 */
function hashBytes(hex: string): Buffer {
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : Buffer.alloc(32);
}

const COPY_LEDGER = `
INSERT INTO ledger_calls (idempotency_key, v, call_id, run_id, session_id, agent_id, surface, tool, risk,
  rule_id, resource, standing_approval_id, attempt, started_at)
SELECT idempotency_key, v, call_id, run_id, session_id, agent_id, surface, tool, risk,
  rule_id, resource, standing_approval_id, attempt, started_at
FROM tool_calls;
INSERT INTO ledger_outcomes (idempotency_key, attempt, status, result, error, finished_at)
SELECT idempotency_key, attempt, status, result, error, coalesce(finished_at, started_at)
FROM tool_calls WHERE status <> 'started';
INSERT INTO ledger_open (idempotency_key, started_at)
SELECT idempotency_key, started_at FROM tool_calls WHERE status = 'started';
`;

const GENESIS_HEX = '0'.repeat(64);

const REPLACE_OLD_TABLES = `
DROP TABLE audit_events;
DROP TABLE tool_calls;

CREATE INDEX audit_log_run ON audit_log(run_id, seq) WHERE run_id IS NOT NULL;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: UPDATE refused'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: DELETE refused'); END;

CREATE TRIGGER ledger_calls_no_delete BEFORE DELETE ON ledger_calls
BEGIN SELECT RAISE(ABORT, 'ledger_calls is the idempotency ledger: DELETE refused'); END;
CREATE TRIGGER ledger_calls_restart_only BEFORE UPDATE ON ledger_calls
WHEN NEW.attempt IS NOT OLD.attempt + 1
  OR NOT EXISTS (SELECT 1 FROM ledger_outcomes o WHERE o.idempotency_key = OLD.idempotency_key
                 AND o.attempt = OLD.attempt AND o.status = 'interrupted')
  OR NEW.idempotency_key IS NOT OLD.idempotency_key OR NEW.v IS NOT OLD.v OR NEW.call_id IS NOT OLD.call_id
  OR NEW.run_id IS NOT OLD.run_id OR NEW.session_id IS NOT OLD.session_id OR NEW.agent_id IS NOT OLD.agent_id
  OR NEW.surface IS NOT OLD.surface OR NEW.tool IS NOT OLD.tool OR NEW.risk IS NOT OLD.risk
  OR NEW.rule_id IS NOT OLD.rule_id OR NEW.resource IS NOT OLD.resource
  OR NEW.standing_approval_id IS NOT OLD.standing_approval_id OR NEW.started_at IS NOT OLD.started_at
BEGIN SELECT RAISE(ABORT, 'ledger_calls: only an interrupted attempt may be restarted (attempt + 1); a completed or failed call is final'); END;
CREATE TRIGGER ledger_outcomes_no_update BEFORE UPDATE ON ledger_outcomes
BEGIN SELECT RAISE(ABORT, 'ledger_outcomes is append-only: an outcome is final, UPDATE refused'); END;
CREATE TRIGGER ledger_outcomes_no_delete BEFORE DELETE ON ledger_outcomes
BEGIN SELECT RAISE(ABORT, 'ledger_outcomes is append-only: DELETE refused'); END;

CREATE VIEW audit_events AS
SELECT a.seq + e.key AS seq,
  json_extract(e.value, '$[0]') AS v, json_extract(e.value, '$[2]') AS at, json_extract(e.value, '$[3]') AS kind,
  json_extract(e.value, '$[4]') AS session_id, json_extract(e.value, '$[5]') AS agent_id,
  json_extract(e.value, '$[6]') AS surface, json_extract(e.value, '$[7]') AS run_id,
  json_extract(e.value, '$[8]') AS call_id, json_extract(e.value, '$[9]') AS tool,
  json_extract(e.value, '$[10]') AS risk, json_extract(e.value, '$[11]') AS rule_id,
  json_extract(e.value, '$[12]') AS resource, json_extract(e.value, '$[13]') AS status,
  json_extract(e.value, '$[14]') AS standing_approval_id, json_extract(e.value, '$[15]') AS detail,
  CASE WHEN e.key > 0 THEN lower(hex(substr(a.hashes, (e.key - 1) * 32 + 1, 32)))
       WHEN a.seq = 1 THEN '${GENESIS_HEX}'
       ELSE (SELECT lower(hex(substr(p.hashes, -32))) FROM audit_log p WHERE p.seq < a.seq ORDER BY p.seq DESC LIMIT 1)
  END AS prev_hash,
  lower(hex(substr(a.hashes, e.key * 32 + 1, 32))) AS hash
FROM audit_log a, json_each(a.body) e;

CREATE VIEW tool_calls AS
SELECT c.idempotency_key AS idempotency_key, c.v AS v, c.call_id AS call_id, c.run_id AS run_id,
  c.session_id AS session_id, c.agent_id AS agent_id, c.surface AS surface, c.tool AS tool, c.risk AS risk,
  c.rule_id AS rule_id, c.resource AS resource, c.standing_approval_id AS standing_approval_id,
  coalesce(o.status, 'started') AS status, c.attempt AS attempt, o.result AS result, o.error AS error,
  c.started_at AS started_at, o.finished_at AS finished_at
FROM ledger_calls c
LEFT JOIN ledger_outcomes o ON o.idempotency_key = c.idempotency_key AND o.attempt = c.attempt;
`;
