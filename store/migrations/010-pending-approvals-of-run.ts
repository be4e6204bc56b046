import type { Migration } from './migration.ts';

/**
 * Version 10: the pending approvals of one run are found through an index. A run that ends
 * withdraws what it still has pending (`approvals.withdrawForRun`), and that query had no index
 * of its own: SQLite walked every pending approval of every run (through the expiry index) and
 * read each row to compare its run — at every run's end, so the cost grew with the Inbox (10,000
 * parked runs: 10,000 rows read per run that completes).
 */
export const pendingApprovalsOfRun: Migration = {
  version: 10,
  name: 'pending-approvals-of-run',
  sql: `CREATE INDEX approvals_pending_run ON approvals(run_id) WHERE status = 'pending';`,
};
