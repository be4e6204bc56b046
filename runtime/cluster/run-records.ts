import { z } from 'zod';
import { RunStatus, type ApprovalRecord } from '../../store/index.ts';
import { isTraceparent } from '../bus/index.ts';
import { createIfAbsent, readVersioned, updateAt, type Versioned, type Bucket } from './kv.ts';

/** A run as every node sees it: who runs it now, its status and its (redacted) snapshot envelope. */
export const RunRecord = z.strictObject({
  v: z.literal(1),
  runId: z.string().min(1),
  /** The node that owns the run: the only one that executes or mirrors it. */
  owner: z.string().min(1),
  status: RunStatus,
  /** The approval the parked run waits on (from its snapshot), else null. */
  approvalId: z.string().nullable(),
  /** The approval request it waits on, as its node opened it (so any node can publish it), else null. */
  approval: z
    .custom<ApprovalRecord>(
      (a) => typeof a === 'object' && a !== null && typeof (a as { id?: unknown }).id === 'string',
      'an approval record',
    )
    .nullable(),
  /** The snapshot envelope exactly as the owner's store holds it (already redacted). */
  envelope: z.unknown(),
  /**
   * The run's trace context as its first node stored it (telemetry on; absent otherwise): a node
   * that takes the run over continues this trace. Its attributes are redacted strings.
   */
  trace: z
    .strictObject({
      traceparent: z.string().refine(isTraceparent, 'a W3C traceparent'),
      attrs: z.record(z.string().max(256), z.string().max(4096)),
    })
    .optional(),
  updatedAt: z.number().int().nonnegative(),
});
export type RunRecord = z.infer<typeof RunRecord>;

/** Statuses after which a run never executes again. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'denied']);

/** Run records in the `runs` bucket; every write names the revision it replaces. */
export class RunRecords {
  constructor(private readonly kv: Bucket) {}

  get(runId: string): Promise<Versioned<RunRecord> | null> {
    return readVersioned(this.kv, runId, RunRecord, 'run record');
  }

  /** Writes a new record; null when the run already has one. */
  create(record: RunRecord): Promise<number | null> {
    return createIfAbsent(this.kv, record.runId, record);
  }

  /** Replaces the record at `revision`; null when someone else wrote it first (e.g. a take-over). */
  update(record: RunRecord, revision: number): Promise<number | null> {
    return updateAt(this.kv, record.runId, record, revision);
  }
}
