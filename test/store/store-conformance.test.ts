// The storage conformance specs (test/support/store-conformance.ts, claims-conformance.ts,
// run-records-conformance.ts) on the SQLite store: a real file per test.
import { sqliteClaimBackend, sqliteInboxBackend, sqliteRunRecordBackend } from '../../store/index.ts';
import { describeClaimsConformance } from '../support/claims-conformance.ts';
import { describeRunRecordsConformance } from '../support/run-records-conformance.ts';
import { describeStoreConformance } from '../support/store-conformance.ts';
import { openTemp } from './helpers.ts';

describeStoreConformance('SQLite (a store file)', () => sqliteInboxBackend(openTemp().store.approvals));

describeClaimsConformance('SQLite (the ledger of a store file)', () => {
  const { store } = openTemp();
  return {
    backend: sqliteClaimBackend(store.ledger),
    // A restart marks the calls its dead process was running interrupted.
    abandon: async (_key, call) => void store.ledger.markInterrupted({ runId: call.runId }),
  };
});

describeRunRecordsConformance('SQLite (the run snapshots of a store file)', () =>
  sqliteRunRecordBackend(openTemp().store.snapshots),
);
