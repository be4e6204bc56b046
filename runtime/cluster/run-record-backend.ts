import { parseRunSnapshot, type RunRecordBackend, type RunSnapshot } from '../../store/index.ts';
import type { RunRecord, RunRecords } from './run-records.ts';

/** The record `owner` writes for a run's envelope: no approval waited on, no trace. */
function recordOf(envelope: RunSnapshot, owner: string): RunRecord {
  // A bad envelope is refused by `RunRecords`, naming the field: nothing is assumed of it here.
  const e = envelope as Partial<RunSnapshot> | null;
  return {
    v: 1,
    runId: e?.runId as string,
    owner,
    status: e?.status as RunSnapshot['status'],
    approvalId: null,
    approval: null,
    envelope,
    updatedAt: e?.updatedAt as number,
  };
}

/**
 * The cluster's run records (JetStream KV, CAS on revision) as a {@link RunRecordBackend}: the
 * records of one node, `owner`. A record read back is its envelope, validated as the store loads
 * one (a node that takes a run over imports it into its store).
 */
export function clusterRunRecordBackend(records: RunRecords, owner: string): RunRecordBackend {
  return {
    get: async (runId) => {
      const found = await records.get(runId);
      if (found === null) return null;
      const record = parseRunSnapshot(found.value.envelope, `cluster run record ${JSON.stringify(runId)}`);
      return { record, revision: found.revision };
    },
    create: (record) => records.create(recordOf(record, owner)),
    update: (record, revision) => records.update(recordOf(record, owner), revision),
    ids: () => records.ids(),
  };
}
