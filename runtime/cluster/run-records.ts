import { z } from 'zod';
import {
  checkRevision,
  checkRunRecord,
  RecordErrorCode,
  RecordRejectedError,
  RunStatus,
  type ApprovalRecord,
  type StringScrubber,
} from '../../store/index.ts';
import { isTraceparent } from '../bus/index.ts';
import { createIfAbsent, listIds, readVersioned, updateAt, type Versioned, type Bucket } from './kv.ts';

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
  constructor(
    private readonly kv: Bucket,
    /** Scrubs registered secrets from the error of a refused input (the store's redactor). */
    private readonly scrubber: StringScrubber,
  ) {}

  get(runId: string): Promise<Versioned<RunRecord> | null> {
    return readVersioned(this.kv, runId, RunRecord, 'run record');
  }

  /** Writes a new record; null when the run already has one. Refuses a bad record (see `#check`). */
  async create(record: RunRecord): Promise<number | null> {
    const checked = this.#check(record, 'create');
    return createIfAbsent(this.kv, checked.runId, checked);
  }

  /**
   * Replaces the record at `revision`; null when someone else wrote it first (e.g. a take-over).
   * Refuses a bad record (see `#check`) or a revision that is not a positive integer.
   */
  async update(record: RunRecord, revision: number): Promise<number | null> {
    const checked = this.#check(record, 'update');
    return updateAt(
      this.kv,
      checked.runId,
      checked,
      checkRevision(revision, this.#where('update', record), this.scrubber),
    );
  }

  /** The id of every run with a record. */
  ids(): Promise<string[]> {
    return listIds(this.kv);
  }

  #where(op: string, record: RunRecord): string {
    return `cluster runs.${op}(${JSON.stringify((record as Partial<RunRecord> | null)?.runId ?? null)})`;
  }

  /**
   * What every node reads back is checked before it is shared (a bad record would be refused by
   * every reader, the run lost with it): its envelope as the store would load it
   * (`checkRunRecord`, the same errors as the store's), then the record's own fields, and the run
   * id and status the two both hold, the same. Throws `RecordRejectedError` naming the bad field;
   * nothing is written.
   */
  #check(record: RunRecord, op: string): RunRecord {
    const where = this.#where(op, record);
    const envelope = checkRunRecord(
      (record as Partial<RunRecord> | null)?.envelope,
      `${where} envelope`,
      this.scrubber,
    );
    const parsed = RunRecord.safeParse(record);
    if (!parsed.success) {
      throw new RecordRejectedError(
        RecordErrorCode.invalidInput,
        this.scrubber.redactString(`${where}: invalid input:\n${z.prettifyError(parsed.error)}`),
        { where, paths: parsed.error.issues.map((issue) => issue.path.join('.')) },
      );
    }
    for (const field of ['runId', 'status'] as const) {
      if (envelope[field] !== parsed.data[field]) {
        throw new RecordRejectedError(
          RecordErrorCode.invalidInput,
          this.scrubber.redactString(`${where}: invalid input: the record's ${field} is not its envelope's`),
          { where, paths: [field] },
        );
      }
    }
    return { ...parsed.data, envelope };
  }
}
