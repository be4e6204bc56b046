import type { Migration } from './migration.ts';

/**
 * Version 11: three indexes of pending approvals that no query used are dropped. Version 1 made
 * one on the session, the task and the agent of each pending approval, but the Inbox's filtered
 * list matches those columns only when a filter is given (`@session IS NULL OR session_id =
 * @session`), a form SQLite cannot search an index for: it walks the pending approvals through
 * the expiry index (a query plan test says so). Every approval opened or decided still wrote to
 * all three — about 100 bytes per pending approval and three B-tree changes at each end.
 */
export const dropUnusedApprovalIndexes: Migration = {
  version: 11,
  name: 'drop-unused-approval-indexes',
  sql: `
DROP INDEX approvals_pending_session;
DROP INDEX approvals_pending_task;
DROP INDEX approvals_pending_agent;
`,
};
