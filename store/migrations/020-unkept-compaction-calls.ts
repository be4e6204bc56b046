import type { Migration } from './migration.ts';

/**
 * Version 20: the usage of a compaction's model call that left no compaction (issue 31). The
 * model answered the summary request with no text, or the compaction was refused when it was
 * to be kept (the session changed meanwhile): the tokens were spent all the same, so they count
 * in the session's usage (and its session budget) beside the kept compactions' own
 * (`session_compactions.input_tokens`, version 18). One row per such call, only when the
 * provider reported usage; `reason` says why nothing was kept.
 */
export const unkeptCompactionCalls: Migration = {
  version: 20,
  name: 'unkept-compaction-calls',
  sql: `
CREATE TABLE session_compaction_unkept (
  session_id TEXT NOT NULL,
  seq INTEGER PRIMARY KEY,
  through_seq INTEGER NOT NULL,
  reason TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX session_compaction_unkept_session ON session_compaction_unkept(session_id);
`,
};
