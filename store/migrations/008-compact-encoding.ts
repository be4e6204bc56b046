import type { Database } from 'better-sqlite3';
import { auditDecodeSql } from '../audit/encoding.ts';
import { legacySnapshotBlob, snapshotBlobFromEnvelope } from '../snapshots/encoding.ts';
import type { Migration } from './migration.ts';

/**
 * Version 8: fewer bytes per run (bench/README.md, "Bytes per parked run — session 3"). A parked
 * run cost 3.8 KB after checkpoint, two thirds of it JSON text that repeats itself.
 *
 * - `run_snapshots.payload` is a BLOB holding only the actor snapshot (the envelope's other
 *   fields are the row's columns, no longer repeated), DEFLATE-compressed with a preset
 *   dictionary of typical snapshots (store/codec.ts, tag 0x53). The `(status, updated_at)` index
 *   is gone: no query used it (`list` scans; EXPLAIN QUERY PLAN in test/store/snapshots.test.ts).
 *   Not WITHOUT ROWID: there a row over ~1 KB (a compressed long transcript) takes an overflow
 *   page, where a rowid table keeps rows up to ~4 KB in its leaf.
 * - New `audit_log` rows store their body with common fragments and the row's run id replaced by
 *   control characters (store/audit/encoding.ts; still TEXT, and a body without codes, every
 *   older row, decodes to itself). The chain is unchanged: every hash is still over an event's
 *   exact JSON body, which decoding gives back. The `audit_events` view decodes in plain SQL.
 *
 * Old snapshot rows are converted: one whose envelope is valid and agrees with its row's columns
 * is re-encoded, any other is kept verbatim as a legacy envelope blob (tag 0x4a), so loading it
 * still fails with the same error naming its run. Old audit rows stay as they are.
 */
export const compactEncoding: Migration = {
  version: 8,
  name: 'compact-encoding',
  sql: `
CREATE TABLE run_snapshots_v8 (
  run_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  surface TEXT NOT NULL,
  status TEXT NOT NULL,
  parent_run_id TEXT,
  schema_version INTEGER NOT NULL,
  payload BLOB NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
`,
  transform(db: Database): void {
    copySnapshots(db);
    db.exec(REPLACE_OLD_TABLES);
  },
};

interface OldSnapshotRow {
  run_id: string;
  agent_id: string;
  surface: string;
  status: string;
  parent_run_id: string | null;
  schema_version: number;
  payload: string;
  updated_at: number;
}

function copySnapshots(db: Database): void {
  const insert = db.prepare(
    `INSERT INTO run_snapshots_v8 (run_id, agent_id, surface, status, parent_run_id, schema_version, payload, updated_at)
     VALUES (@run_id, @agent_id, @surface, @status, @parent_run_id, @schema_version, @payload, @updated_at)`,
  );
  // In pages: a connection cannot write while it iterates, and many runs must not be loaded whole.
  const page = db.prepare('SELECT * FROM run_snapshots WHERE run_id > ? ORDER BY run_id LIMIT 500');
  let after = '';
  for (;;) {
    const rows = page.all(after) as OldSnapshotRow[];
    if (rows.length === 0) return;
    for (const row of rows) {
      const payload = snapshotBlobFromEnvelope(row.payload, row) ?? legacySnapshotBlob(row.payload);
      insert.run({ ...row, payload });
    }
    after = (rows[rows.length - 1] as OldSnapshotRow).run_id;
  }
}

const GENESIS_HEX = '0'.repeat(64);

const REPLACE_OLD_TABLES = `
DROP TABLE run_snapshots;
ALTER TABLE run_snapshots_v8 RENAME TO run_snapshots;

DROP VIEW audit_events;

CREATE VIEW audit_events AS
WITH ${auditDecodeSql('SELECT seq, last_seq, run_id, body, hashes FROM audit_log')}
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
FROM audit_decoded a, json_each(a.body) e;
`;
