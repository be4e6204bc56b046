import type { Migration } from './migration.ts';

/**
 * Version 21: a run snapshot's revision (issue 30). 1 when the run's row is first written, one
 * more at every write that changes it, so a caller can replace a run's snapshot only at the
 * revision it read (compare-and-set: `snapshots.replaceAt`), as the cluster's run records do on
 * JetStream; both are held to one contract, `RunRecordBackend`. The rows of an older file start
 * at 1, as if each had been written once.
 */
export const runSnapshotRevision: Migration = {
  version: 21,
  name: 'run-snapshot-revision',
  sql: `
ALTER TABLE run_snapshots ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
`,
};
