import { CodecError, decodeText, encodeText } from '../codec.ts';
import type { TextCodec } from '../codec.ts';
import { RecordErrorCode, RecordRejectedError } from '../errors.ts';
import { SNAPSHOT_DICTIONARY } from './dictionary.ts';
import { MAX_SNAPSHOT_BYTES, acceptCurrentEnvelope, parseRunSnapshot } from './format.ts';
import type { RunSnapshot } from './format.ts';

/**
 * How a run snapshot is stored (schema version 8): the row's columns hold the envelope fields
 * (run, agent, surface, status, parent, version, time) and `payload` only the actor snapshot's
 * JSON, compressed (store/codec.ts, tag 0x53 with SNAPSHOT_DICTIONARY). A payload tagged 0x4a
 * is a whole version-1 envelope kept verbatim by migration 8 (one it could not convert), read
 * as before; a TEXT payload is the layout of versions 1–7 (a read-only open of an older file).
 */
export const SNAPSHOT_CODEC: TextCodec = {
  what: 'run snapshot',
  tag: 0x53,
  dictionary: SNAPSHOT_DICTIONARY,
  maxBytes: MAX_SNAPSHOT_BYTES,
};

/** The tag of a legacy envelope blob: the version-1 envelope's JSON text as it was stored. */
export const LEGACY_ENVELOPE_TAG = 0x4a;

/** The columns a stored snapshot's envelope is rebuilt from. */
export interface SnapshotColumns {
  readonly run_id: string;
  readonly agent_id: string;
  readonly surface: string;
  readonly status: string;
  readonly parent_run_id: string | null;
  readonly schema_version: number;
  readonly updated_at: number;
}

/**
 * The stored payload of an (already redacted) actor snapshot's JSON text. Every write is
 * compressed: storing a running run's rows plain (they are rewritten at the next step) saved the
 * zlib call, but the rows then shrank at park and left their pages ~40 % full (bench/README.md,
 * "Bytes per parked run — session 3").
 */
export function encodeSnapshotPayload(snapshotJson: string): Buffer {
  return encodeText(SNAPSHOT_CODEC, snapshotJson);
}

/** A legacy envelope's text kept as it was (migration 8, for an envelope it could not convert). */
export function legacySnapshotBlob(envelopeJson: string): Buffer {
  return Buffer.concat([Buffer.of(LEGACY_ENVELOPE_TAG), Buffer.from(envelopeJson, 'utf8')]);
}

/**
 * The compact payload of a version-1 envelope stored as text, or null when the envelope does not
 * load (any reason `parseRunSnapshot` gives) or names other values than its row's columns.
 */
export function snapshotBlobFromEnvelope(envelopeJson: string, row: SnapshotColumns): Buffer | null {
  let envelope: RunSnapshot;
  try {
    envelope = parseRunSnapshot(envelopeJson, 'migration 8');
  } catch {
    return null;
  }
  const agrees =
    envelope.runId === row.run_id &&
    envelope.agentId === row.agent_id &&
    envelope.surface === row.surface &&
    envelope.status === row.status &&
    envelope.parentRunId === row.parent_run_id &&
    envelope.$schemaVersion === row.schema_version &&
    envelope.updatedAt === row.updated_at;
  return agrees ? encodeSnapshotPayload(JSON.stringify(envelope.snapshot)) : null;
}

/**
 * Loads a stored row as a validated envelope (see `parseRunSnapshot`), whatever its layout;
 * `source` names the row in errors. A payload that does not decode is `snapshot_malformed`.
 */
export function decodeSnapshotRow(
  row: SnapshotColumns & { readonly payload: string | Uint8Array },
  source: string,
  scrubber?: { redactString(text: string): string },
): RunSnapshot {
  const payload = row.payload;
  if (typeof payload === 'string') return parseRunSnapshot(payload, source, scrubber);
  if (payload[0] === LEGACY_ENVELOPE_TAG) {
    return parseRunSnapshot(Buffer.from(payload.subarray(1)).toString('utf8'), source, scrubber);
  }
  let snapshot: unknown;
  try {
    snapshot = JSON.parse(decodeText(SNAPSHOT_CODEC, payload)) as unknown;
  } catch (error) {
    const problem =
      error instanceof CodecError ? error.message : `payload is not valid JSON (${(error as Error).message})`;
    throw new RecordRejectedError(
      RecordErrorCode.snapshotMalformed,
      `run snapshot from ${source}: ${problem}; it was not loaded`,
      { source },
    );
  }
  const envelope = {
    $schemaVersion: row.schema_version,
    runId: row.run_id,
    agentId: row.agent_id,
    surface: row.surface,
    status: row.status,
    parentRunId: row.parent_run_id,
    updatedAt: row.updated_at,
    snapshot,
  };
  // One pass for a row as this code writes it; anything else gets the full parse and its error.
  return acceptCurrentEnvelope(envelope) ?? parseRunSnapshot(envelope, source, scrubber);
}
