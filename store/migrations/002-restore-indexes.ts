import type { Migration } from './migration.ts';

/**
 * Version 2: indexes for work done at boot and on a timer. Version 1 found the `started` calls
 * to mark `interrupted` at restore, and the pending approvals past their deadline, by scanning
 * whole tables — cost growing with history instead of with the few rows that matter. Partial
 * indexes keep both proportional to the rows in that state.
 */
export const restoreIndexes: Migration = {
  version: 2,
  name: 'restore-indexes',
  sql: `
CREATE INDEX tool_calls_started ON tool_calls(started_at) WHERE status = 'started';
CREATE INDEX approvals_pending_expiry ON approvals(expires_at) WHERE status = 'pending';
`,
};
