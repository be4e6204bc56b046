import type { Migration } from './migration.ts';

/**
 * Version 16: a session's compactions. Each row says that the session's entries before
 * `through_seq` are compacted: the model is shown `summary` (the model's own summary of them,
 * redacted) in their place. The entries themselves stay in `session_entries`; the latest row
 * whose `through_seq` a run's history reaches is the one used.
 */
export const sessionCompactions: Migration = {
  version: 16,
  name: 'session-compactions',
  sql: `
CREATE TABLE session_compactions (
  session_id TEXT NOT NULL,
  through_seq INTEGER NOT NULL CHECK (through_seq > 0),
  summary TEXT NOT NULL,
  summarized INTEGER NOT NULL CHECK (summarized > 0),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, through_seq)
) STRICT, WITHOUT ROWID;`,
};
