import type { Statement } from 'better-sqlite3';
import { z } from 'zod';
import { assertWritable } from '../context.ts';
import type { StoreContext } from '../context.ts';
import { RecordErrorCode, RecordRejectedError } from '../errors.ts';
import { parseInput } from '../schema.ts';
import { Id, Timestamp } from '../schema.ts';
import { decodeSnapshotRow, encodeSnapshotPayload } from './encoding.ts';
import { checkRevision, checkRunRecord } from './record-input.ts';
import { MAX_SNAPSHOT_BYTES, RunStatus, SNAPSHOT_SCHEMA_VERSION, parseRunSnapshot } from './format.ts';
import type { RunSnapshot } from './format.ts';

/** What a caller gives to persist a run: the envelope fields and the opaque actor snapshot. */
export const PutSnapshotInput = z.strictObject({
  runId: Id,
  agentId: Id,
  surface: Id,
  status: RunStatus,
  parentRunId: Id.nullable().optional(),
  updatedAt: Timestamp.optional(),
  /** The persisted actor snapshot (e.g. XState's `getPersistedSnapshot()`): a JSON object. */
  snapshot: z.unknown(),
});
export type PutSnapshotInput = z.input<typeof PutSnapshotInput>;

/** How many runs' last encoded payload `RunSnapshots` keeps for reuse. */
const LAST_PAYLOADS = 256;

/** A stored run without its payload, for listings. */
export interface RunSummary {
  readonly runId: string;
  readonly agentId: string;
  readonly surface: string;
  readonly status: RunStatus;
  readonly parentRunId: string | null;
  readonly updatedAt: number;
  readonly schemaVersion: number;
}

/**
 * What stands for a put's content without reading it: the caller's own immutable objects the
 * input was computed from (the run actor's snapshot and its children's, say). Two puts with the
 * same objects in the same order have the same input.
 */
export type SnapshotToken = readonly object[];

/** The row this connection last committed for a run (see `RunSnapshots.lastRow`). */
interface LastRow {
  /** Its columns and payload (its `updated_at` is the time it was written). */
  readonly row: SnapshotRow;
  /** The token of the put that wrote it, the redactor's generation then, and what it returned. */
  readonly token?: SnapshotToken;
  readonly generation?: number;
  readonly envelope?: RunSnapshot;
}

function sameToken(a: SnapshotToken | undefined, b: SnapshotToken): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Filters for `list`. */
export interface RunFilter {
  readonly status?: RunStatus;
  readonly agentId?: string;
}

interface SnapshotRow {
  run_id: string;
  agent_id: string;
  surface: string;
  status: RunStatus;
  parent_run_id: string | null;
  schema_version: number;
  /** Schema version 8: the encoded actor snapshot (encoding.ts); versions 1–7: the envelope's JSON. */
  payload: Buffer | string;
  updated_at: number;
  /** Schema version 21: 1 at the row's first write, one more at each write that changes it. */
  revision?: number;
}

/** A run's stored snapshot with the revision a compare-and-set write names (`replaceAt`). */
export interface VersionedSnapshot {
  readonly envelope: RunSnapshot;
  readonly revision: number;
}

/**
 * Persisted run snapshots, one row per run: versioned envelopes (`$schemaVersion`, see
 * format.ts) whose fields are the row's columns and whose opaque actor snapshot is the
 * payload, compressed (encoding.ts). Writes validate first (forbidden keys, version, fields, size),
 * redact the snapshot, encode the redacted JSON, then upsert in a transaction; reads decode and
 * validate again, so a row altered on disk is refused rather than restored. Durability NORMAL
 * (see durability.ts).
 */
export class RunSnapshots {
  // Prepared at first write: a file of an older version opened read-only has no `revision`.
  #upsert: Statement<SnapshotRow> | null = null;
  #revision: Statement<[string], number> | null = null;
  private readonly byId: Statement<[string], SnapshotRow>;
  private readonly exists: Statement<[string], number>;
  private readonly statusStmt: Statement<[string], string>;
  private readonly listStmt: Statement<{ status: string | null; agent: string | null }, SnapshotRow>;
  private readonly unfinishedStmt: Statement<[], SnapshotRow>;
  private readonly deleteStmt: Statement<[string]>;
  /**
   * The last payload encoded per run (at most LAST_PAYLOADS runs, oldest dropped first): a run
   * often writes the same actor snapshot twice in a row (2 of its 9 writes in the peers
   * scenario), and encoding is deterministic, so the second write reuses the bytes instead of
   * compressing again. Only redacted JSON is kept, as the row itself holds it.
   */
  private readonly lastPayload = new Map<string, { readonly json: string; readonly payload: Buffer }>();
  /**
   * The row this connection last committed per run (at most LAST_PAYLOADS runs), but for its
   * time: a put whose row is the same in every other column changes nothing stored, so it is not
   * written again (no commit, no WAL frames for the next fsync to flush); `updated_at` then stays
   * the time of the last change. Forgotten whole when anything rolls back (the row may not be
   * there), and only kept for writes in this runner's own transactions, whose rollbacks it sees;
   * a put that gives its own `updatedAt` is always written.
   * The runtime is the only writer of run snapshots while it runs (the state lock).
   */
  private readonly lastRow = new Map<string, LastRow>();
  /** Writes this connection skipped as unchanged (see `lastRow`), for tests and benchmarks. */
  unchangedSkipped = 0;

  constructor(private readonly ctx: StoreContext) {
    const db = ctx.db;
    this.byId = db.prepare('SELECT * FROM run_snapshots WHERE run_id = ?');
    this.exists = db.prepare<[string], number>('SELECT 1 FROM run_snapshots WHERE run_id = ?').pluck();
    this.statusStmt = db
      .prepare<[string], string>('SELECT status FROM run_snapshots WHERE run_id = ?')
      .pluck();
    this.listStmt = db.prepare(
      `SELECT run_id, agent_id, surface, status, parent_run_id, schema_version, '' AS payload, updated_at
       FROM run_snapshots WHERE (@status IS NULL OR status = @status) AND (@agent IS NULL OR agent_id = @agent)
       ORDER BY updated_at, run_id`,
    );
    this.unfinishedStmt = db.prepare(UNFINISHED_RUNS_SQL);
    this.deleteStmt = db.prepare('DELETE FROM run_snapshots WHERE run_id = ?');
    ctx.tx.onFlush(
      () => {},
      () => this.lastRow.clear(),
    );
  }

  /** Whether two rows have the same columns but for their time (the payload is a deterministic encoding). */
  private static sameRow(a: SnapshotRow, b: SnapshotRow): boolean {
    return (
      a.agent_id === b.agent_id &&
      a.surface === b.surface &&
      a.status === b.status &&
      a.parent_run_id === b.parent_run_id &&
      a.schema_version === b.schema_version &&
      (a.payload === b.payload ||
        (typeof a.payload !== 'string' && typeof b.payload !== 'string' && a.payload.equals(b.payload)))
    );
  }

  /** The encoded payload of `json` for `runId`, reusing the last one when the JSON is the same. */
  private payloadOf(runId: string, json: string): Buffer {
    const last = this.lastPayload.get(runId);
    if (last !== undefined && last.json === json) return last.payload;
    const payload = encodeSnapshotPayload(json);
    this.lastPayload.delete(runId);
    this.lastPayload.set(runId, { json, payload });
    if (this.lastPayload.size > LAST_PAYLOADS) {
      const oldest = this.lastPayload.keys().next().value;
      if (oldest !== undefined) this.lastPayload.delete(oldest);
    }
    return payload;
  }

  private remember(runId: string, row: LastRow): void {
    this.lastRow.delete(runId);
    this.lastRow.set(runId, row);
    if (this.lastRow.size > LAST_PAYLOADS) {
      const oldest = this.lastRow.keys().next().value;
      if (oldest !== undefined) this.lastRow.delete(oldest);
    }
  }

  /**
   * Persists (inserts or replaces) one run's snapshot atomically; returns what was stored (a row
   * unchanged but for its time is not rewritten and keeps its stored time, see `lastRow`).
   */
  put(input: PutSnapshotInput, token?: SnapshotToken): RunSnapshot {
    if (token !== undefined) {
      // The same objects as the write this connection last committed for the run, redacted at
      // the same generation: the row would be the same but for its time, so nothing is prepared.
      const last = this.lastRow.get(input.runId);
      if (
        last?.envelope !== undefined &&
        input.updatedAt === undefined &&
        last.generation === this.ctx.redactor.generation &&
        sameToken(last.token, token)
      ) {
        assertWritable(this.ctx, 'snapshots.put');
        this.unchangedSkipped++;
        return last.envelope;
      }
    }
    return this.putMany([input], token)[0] as RunSnapshot;
  }

  /**
   * Persists several snapshots in one transaction (batching is fine for snapshots, see
   * durability.ts). Every input is validated and redacted before the transaction starts, so one
   * bad input writes nothing.
   */
  putMany(inputs: readonly PutSnapshotInput[], token?: SnapshotToken): RunSnapshot[] {
    assertWritable(this.ctx, 'snapshots.put');
    // Read before preparing: redacting this input may teach the redactor a secret.
    const generation = this.ctx.redactor.generation;
    const prepared = inputs.map((input) => this.prepare(input));
    // A token stands for one input only: with several, none is remembered.
    const tokenOf = inputs.length === 1 && generation === this.ctx.redactor.generation ? token : undefined;
    const changed: Array<{ row: SnapshotRow; envelope: RunSnapshot }> = [];
    const envelopes = prepared.map(({ envelope, row }, i) => {
      const last = this.lastRow.get(row.run_id);
      if (last === undefined || !RunSnapshots.sameRow(last.row, row) || inputs[i]?.updatedAt !== undefined) {
        changed.push({ row, envelope });
        return envelope;
      }
      this.unchangedSkipped++;
      const kept = { ...envelope, updatedAt: last.row.updated_at };
      if (tokenOf !== undefined)
        this.remember(row.run_id, { ...last, token: tokenOf, generation, envelope: kept });
      return kept;
    });
    if (changed.length === 0) return envelopes;
    // A transaction opened on the raw connection is not this runner's: its rollback is not seen.
    const tracked = !this.ctx.db.inTransaction || this.ctx.tx.owned;
    const upsert = (this.#upsert ??= this.ctx.db.prepare(UPSERT_SQL));
    this.ctx.tx.run(() => {
      for (const { row, envelope } of changed) {
        upsert.run(row);
        if (!tracked) this.lastRow.delete(row.run_id);
        else if (tokenOf === undefined) this.remember(row.run_id, { row });
        else this.remember(row.run_id, { row, token: tokenOf, generation, envelope });
      }
    });
    return envelopes;
  }

  /**
   * Imports an envelope written elsewhere (a file, a backup): the same validation as a load
   * (`parseRunSnapshot`, naming `source`), then the same redaction and write as `put`.
   */
  importEnvelope(json: unknown, source: string): RunSnapshot {
    const { $schemaVersion: _version, ...fields } = parseRunSnapshot(json, source, this.ctx.redactor);
    return this.put(fields);
  }

  /**
   * A run's snapshot (validated as `get` does) with its revision; null when the run has none. A
   * file of an older schema version opened read-only has no revisions: its rows read at 1, the
   * revision its migration gives them.
   */
  versioned(runId: string): VersionedSnapshot | null {
    const row = this.byId.get(runId);
    if (!row) return null;
    const source = `${this.ctx.file} run_snapshots[${row.run_id}]`;
    return { envelope: decodeSnapshotRow(row, source, this.ctx.redactor), revision: row.revision ?? 1 };
  }

  /**
   * Writes a run's first snapshot: an envelope (validated as `importEnvelope` does, naming
   * `source`; redacted as every put) only while the run has none. Returns its revision (1), or
   * null when the run has a snapshot already (nothing written). A refused envelope throws
   * `RecordRejectedError` naming the bad field, and writes nothing.
   */
  create(json: unknown, source: string): number | null {
    return this.#writeAt(json, source, null);
  }

  /**
   * Compare-and-set: replaces a run's snapshot with an envelope (checked and redacted as by
   * `create`) only while its stored revision is `revision`. Returns the new revision, or null when
   * the stored one differs or the run has none (nothing written). It always moves the revision
   * on, even with the same content. A revision that is not a positive integer throws
   * `RecordRejectedError` (`invalid_input`) naming it, and writes nothing.
   */
  replaceAt(json: unknown, source: string, revision: number): number | null {
    return this.#writeAt(json, source, checkRevision(revision, source, this.ctx.redactor));
  }

  #writeAt(json: unknown, source: string, expected: number | null): number | null {
    assertWritable(this.ctx, expected === null ? 'snapshots.create' : 'snapshots.replaceAt');
    const { $schemaVersion: _version, ...fields } = checkRunRecord(json, source, this.ctx.redactor);
    const revision = (this.#revision ??= this.ctx.db
      .prepare<[string], number>('SELECT revision FROM run_snapshots WHERE run_id = ?')
      .pluck());
    return this.ctx.tx.run(() => {
      if ((revision.get(fields.runId) ?? null) !== expected) return null;
      // Its own `updatedAt`: always written (see `lastRow`), so the revision moves on.
      this.put(fields);
      return revision.get(fields.runId) ?? null;
    });
  }

  /** Whether a run has a stored snapshot (no decoding: a cheap existence check). */
  has(runId: string): boolean {
    return this.exists.get(runId) !== undefined;
  }

  /**
   * A run's stored status column alone (no payload decoded), or null when the run has none. Not
   * validated like `get`: a caller that acts on a status it finds loads the snapshot with `get`.
   */
  statusOf(runId: string): string | null {
    return this.statusStmt.get(runId) ?? null;
  }

  /** Loads and validates a run's snapshot (a row altered on disk is refused); null when the run has none. */
  get(runId: string): RunSnapshot | null {
    const row = this.byId.get(runId);
    if (!row) return null;
    return decodeSnapshotRow(row, `${this.ctx.file} run_snapshots[${row.run_id}]`, this.ctx.redactor);
  }

  /** Runs with a stored snapshot, oldest update first, filtered by status and/or agent. */
  list(filter: RunFilter = {}): RunSummary[] {
    const { status, agentId } = filter;
    // An unfinished status: among the unfinished runs (by their index), not every run.
    if (status !== undefined && UNFINISHED.includes(status))
      return this.listUnfinished().filter(
        (r) => r.status === status && (agentId === undefined || r.agentId === agentId),
      );
    return this.listStmt.all({ status: status ?? null, agent: agentId ?? null }).map(summaryOf);
  }

  /**
   * The runs not finished (running, waiting for approval, resuming), oldest change first: what
   * a boot brings back. Found by their own index, without reading the finished runs.
   */
  listUnfinished(): RunSummary[] {
    return this.unfinishedStmt.all().map(summaryOf);
  }

  /** Deletes a run's snapshot (when the run is finished and archived); true when one existed. */
  remove(runId: string): boolean {
    assertWritable(this.ctx, 'snapshots.remove');
    this.lastPayload.delete(runId);
    this.lastRow.delete(runId);
    return this.ctx.tx.run(() => this.deleteStmt.run(runId).changes === 1);
  }

  private prepare(input: PutSnapshotInput): { envelope: RunSnapshot; row: SnapshotRow } {
    const req = parseInput(PutSnapshotInput, input, 'snapshots.put', this.ctx.redactor);
    const source = `snapshots.put(${req.runId})`;
    const candidate = {
      $schemaVersion: SNAPSHOT_SCHEMA_VERSION,
      runId: req.runId,
      agentId: req.agentId,
      surface: req.surface,
      status: req.status,
      parentRunId: req.parentRunId ?? null,
      updatedAt: req.updatedAt ?? this.ctx.clock(),
      snapshot: req.snapshot,
    };
    // Validate the caller's data as given (forbidden keys, shape) before redaction can hide anything.
    const checked = parseRunSnapshot(candidate, source, this.ctx.redactor);
    // Redaction only replaces values (and censors keys) inside an already valid object, so the
    // envelope needs no second validation pass; reads validate again anyway.
    const redacted = this.ctx.redactor.redact(checked.snapshot);
    if (typeof redacted !== 'object' || redacted === null || Array.isArray(redacted)) {
      throw new RecordRejectedError(
        RecordErrorCode.snapshotMalformed,
        `${source}: the redacted snapshot is not an object`,
        {
          runId: req.runId,
        },
      );
    }
    const envelope: RunSnapshot = { ...checked, snapshot: redacted as Record<string, unknown> };
    // Only the actor snapshot is stored as JSON: the other envelope fields are the row's columns.
    const json = JSON.stringify(envelope.snapshot);
    if (Buffer.byteLength(json, 'utf8') > MAX_SNAPSHOT_BYTES) {
      throw new RecordRejectedError(
        RecordErrorCode.snapshotTooLarge,
        `${source}: the serialized snapshot is larger than ${MAX_SNAPSHOT_BYTES} bytes; nothing was written`,
        { runId: req.runId },
      );
    }
    const row: SnapshotRow = {
      run_id: envelope.runId,
      agent_id: envelope.agentId,
      surface: envelope.surface,
      status: envelope.status,
      parent_run_id: envelope.parentRunId,
      schema_version: envelope.$schemaVersion,
      payload: this.payloadOf(envelope.runId, json),
      updated_at: envelope.updatedAt,
    };
    return { envelope, row };
  }
}

/** Inserts a run's row (revision 1) or replaces it (the revision one more). */
const UPSERT_SQL = `INSERT INTO run_snapshots (run_id, agent_id, surface, status, parent_run_id, schema_version, payload, updated_at)
  VALUES (@run_id, @agent_id, @surface, @status, @parent_run_id, @schema_version, @payload, @updated_at)
  ON CONFLICT (run_id) DO UPDATE SET agent_id = excluded.agent_id, surface = excluded.surface,
    status = excluded.status, parent_run_id = excluded.parent_run_id, schema_version = excluded.schema_version,
    payload = excluded.payload, updated_at = excluded.updated_at, revision = run_snapshots.revision + 1`;

/** The statuses of a run that has not ended. */
const UNFINISHED: readonly RunStatus[] = ['running', 'waiting_for_approval', 'resuming'];

const SUMMARY_COLUMNS = `run_id, agent_id, surface, status, parent_run_id, schema_version, '' AS payload, updated_at`;

/**
 * @internal The unfinished runs (`listUnfinished`): the WHERE of the partial index
 * `run_snapshots_unfinished` (schema 12) word for word, so SQLite reads that index, not every
 * run: the finished ones grow with the history.
 */
export const UNFINISHED_RUNS_SQL = `SELECT ${SUMMARY_COLUMNS} FROM run_snapshots
  WHERE status IN ('running', 'waiting_for_approval', 'resuming') ORDER BY updated_at, run_id`;

function summaryOf(row: SnapshotRow): RunSummary {
  return {
    runId: row.run_id,
    agentId: row.agent_id,
    surface: row.surface,
    status: row.status,
    parentRunId: row.parent_run_id,
    updatedAt: row.updated_at,
    schemaVersion: row.schema_version,
  };
}
