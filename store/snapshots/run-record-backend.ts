import type { RunSnapshot } from './format.ts';
import type { RunSnapshots } from './store.ts';

/** A run's record read back with the revision a replace must name. */
export interface VersionedRun {
  readonly record: RunSnapshot;
  readonly revision: number;
}

/**
 * What every backend keeps of a run, the same way: the SQLite store's run snapshots on one node
 * and the cluster's run records on JetStream (runtime/cluster/run-records.ts). A record is the
 * run's snapshot envelope (store/snapshots/format.ts: id, agent, surface, status, parent, time of
 * the change and the actor snapshot); what the cluster adds to it (the owner node, the approval
 * it waits on, its trace) is the cluster's own. Both are held to it by one conformance spec
 * (test/support/run-records-conformance.ts). It promises:
 * - `create` writes a run's first record only while the run has none: of two creates, however
 *   close, exactly one returns a revision; the other returns null and the first record stays;
 * - `update` replaces a record only at the revision it was read at (compare-and-set): at any
 *   other revision, or for a run without a record, it returns null and changes nothing; of
 *   updates at one revision, however close, exactly one wins; every write returns a revision
 *   greater than the one it replaced, even when the content is the same;
 * - `get` returns the record as last written (a run's terminal status included) with its
 *   revision; ids are exact: a look-alike id is another run;
 * - a write with bad input (a record `parseRunSnapshot` refuses, a revision that is not a positive
 *   integer) is refused with an error naming the input (`RecordRejectedError`), and writes nothing;
 * - `ids` lists every run that has a record, in no particular order.
 * Redaction is not part of it: the store redacts what it is given, and the cluster mirrors
 * records the store has already redacted.
 */
export interface RunRecordBackend {
  /** The run's record with its revision, or null when it has none. */
  get(runId: string): Promise<VersionedRun | null>;
  /** Writes the run's first record; its revision, or null when the run has one already. */
  create(record: RunSnapshot): Promise<number | null>;
  /** Replaces the run's record at `revision`; the new revision, or null when it is not the current one. */
  update(record: RunSnapshot, revision: number): Promise<number | null>;
  /** The id of every run with a record. */
  ids(): Promise<string[]>;
}

/** The SQLite store's run snapshots as a {@link RunRecordBackend} (a revision per row, schema version 21). */
export function sqliteRunRecordBackend(snapshots: RunSnapshots): RunRecordBackend {
  const where = (op: string, record: RunSnapshot): string =>
    `runs.${op}(${JSON.stringify((record as { runId?: unknown } | null)?.runId ?? null)})`;
  return {
    // Async: a refused input is a rejected promise, as on every backend.
    get: async (runId) => {
      const found = snapshots.versioned(runId);
      return found === null ? null : { record: found.envelope, revision: found.revision };
    },
    create: async (record) => snapshots.create(record, where('create', record)),
    update: async (record, revision) => snapshots.replaceAt(record, where('update', record), revision),
    ids: async () => snapshots.list().map((r) => r.runId),
  };
}
