import type { Migration } from './migration.ts';

/**
 * Version 12: a partial index of the runs that have not ended, by the time of their last
 * change. A boot brings back the unfinished runs (`snapshots.listUnfinished`); without an index
 * it read every row of `run_snapshots`, payloads included, so its cost grew with the history of
 * finished runs, which is never trimmed on its own. The index holds only unfinished runs (a few
 * bytes each: the time and the rowid), and a run leaves it when it ends.
 */
export const unfinishedRunsIndex: Migration = {
  version: 12,
  name: 'unfinished-runs-index',
  sql: `
CREATE INDEX run_snapshots_unfinished ON run_snapshots(updated_at)
  WHERE status IN ('running', 'waiting_for_approval', 'resuming');
`,
};
