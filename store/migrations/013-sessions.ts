import type { Migration } from './migration.ts';

/**
 * Version 13: durable conversations. `sessions` holds one row per conversation: its agent, the
 * workspace (primary root) it belongs to (for `snotra run --continue`), a title (its first user
 * message, shortened and redacted), and the run that holds it now (`active_run_id`: one run at a
 * time per session). `session_entries` is its transcript as the model saw it, in order, one
 * redacted entry per row. `session_runs` records each run whose entries were appended: its
 * primary key makes a second append of one run impossible (a run resumed after a restart ends
 * once more, and appends nothing).
 */
export const sessions: Migration = {
  version: 13,
  name: 'sessions',
  sql: `
CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  workspace TEXT NOT NULL,
  surface TEXT NOT NULL,
  title TEXT,
  entries INTEGER NOT NULL DEFAULT 0 CHECK (entries >= 0),
  runs INTEGER NOT NULL DEFAULT 0 CHECK (runs >= 0),
  active_run_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_recent ON sessions (workspace, updated_at);
CREATE TABLE session_entries (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL CHECK (seq >= 0),
  run_id TEXT NOT NULL,
  entry TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE session_runs (
  run_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  first_seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  status TEXT NOT NULL,
  appended_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX session_runs_of_session ON session_runs (session_id);
`,
};
