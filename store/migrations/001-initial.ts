import type { Migration } from './migration.ts';

/**
 * Version 1: run snapshots, the tool-call ledger, the append-only audit log, approvals (the
 * Inbox), session and standing approvals. Timestamps are integer milliseconds since the epoch;
 * payload columns hold redacted JSON text. Frozen: a database written by it is kept as a test
 * fixture (`test/store/fixtures/schema-v1.sql`); change the schema only through a new migration.
 */
export const initial: Migration = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE run_snapshots (
  run_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  surface TEXT NOT NULL,
  status TEXT NOT NULL,
  parent_run_id TEXT,
  schema_version INTEGER NOT NULL,
  payload TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX run_snapshots_status ON run_snapshots(status, updated_at);

CREATE TABLE tool_calls (
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
  status TEXT NOT NULL CHECK (status IN ('started', 'completed', 'failed', 'interrupted')),
  attempt INTEGER NOT NULL,
  result TEXT,
  error TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE TRIGGER tool_calls_no_delete BEFORE DELETE ON tool_calls
BEGIN SELECT RAISE(ABORT, 'tool_calls is the idempotency ledger: DELETE refused'); END;
CREATE TRIGGER tool_calls_final BEFORE UPDATE ON tool_calls
WHEN OLD.status IN ('completed', 'failed')
BEGIN SELECT RAISE(ABORT, 'tool_calls: a completed or failed call is final'); END;

CREATE TABLE audit_events (
  seq INTEGER PRIMARY KEY,
  v INTEGER NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  session_id TEXT,
  agent_id TEXT,
  surface TEXT,
  run_id TEXT,
  call_id TEXT,
  tool TEXT,
  risk TEXT,
  rule_id TEXT,
  resource TEXT,
  status TEXT,
  standing_approval_id TEXT,
  detail TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
) STRICT;
CREATE INDEX audit_events_run ON audit_events(run_id, seq) WHERE run_id IS NOT NULL;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused'); END;

CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  call_id TEXT NOT NULL UNIQUE,
  run_id TEXT,
  session_id TEXT NOT NULL,
  task_id TEXT,
  agent_id TEXT NOT NULL,
  parent_agent_id TEXT,
  parent_run_id TEXT,
  surface TEXT,
  tool TEXT NOT NULL,
  args TEXT NOT NULL,
  target TEXT,
  risk TEXT NOT NULL,
  reason TEXT NOT NULL,
  rule_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  resume_checkpoint TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  decided_by TEXT,
  decided_at INTEGER
) STRICT;
CREATE INDEX approvals_pending_session ON approvals(session_id) WHERE status = 'pending';
CREATE INDEX approvals_pending_task ON approvals(task_id) WHERE status = 'pending';
CREATE INDEX approvals_pending_agent ON approvals(agent_id) WHERE status = 'pending';
CREATE TRIGGER approvals_single_use BEFORE UPDATE ON approvals
WHEN OLD.status <> 'pending'
BEGIN SELECT RAISE(ABORT, 'approvals: a decided or expired approval is final'); END;

CREATE TABLE session_approvals (
  id TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  target TEXT,
  granted_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  revoked_by TEXT
) STRICT;
CREATE INDEX session_approvals_active ON session_approvals(session_id, tool) WHERE revoked_at IS NULL;

CREATE TABLE standing_approvals (
  id TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  owner_task_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  target TEXT NOT NULL,
  granted_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  revoked_by TEXT
) STRICT;
CREATE INDEX standing_approvals_active ON standing_approvals(owner_task_id, tool, target)
WHERE revoked_at IS NULL;
`,
};
