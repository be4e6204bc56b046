import type { Migration } from './migration.ts';

/**
 * Version 14: an Inbox item is of a kind. `tool` (every row before) asks for one tool call;
 * `budget` asks to extend a run's budget once (the run went past it and parked). Both are
 * decided through the same single-use `decide`.
 */
export const approvalKind: Migration = {
  version: 14,
  name: 'approval-kind',
  sql: `ALTER TABLE approvals ADD COLUMN kind TEXT NOT NULL DEFAULT 'tool';`,
};
