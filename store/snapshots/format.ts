import { z } from 'zod';
import { RecordErrorCode, RecordRejectedError } from '../errors.ts';
import type { StringScrubber } from '../errors.ts';
import { findForbiddenKey, isJsonObject } from '../json.ts';
import { nullable, oneOf } from '../fast-parse.ts';
import { FAST, Id, Timestamp } from '../schema.ts';

/** The snapshot envelope version this code writes. */
export const SNAPSHOT_SCHEMA_VERSION = 1;

/** Every envelope version this code can load (and upgrade to the current one). */
export const SUPPORTED_SNAPSHOT_VERSIONS: readonly number[] = [1];

/** Largest serialized snapshot accepted (16 MiB): a bigger one is a bug or an attack. */
export const MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

/** The run lifecycle states (DESIGN.md §3). */
export const RunStatus = z.enum([
  'running',
  'waiting_for_approval',
  'resuming',
  'completed',
  'failed',
  'denied',
]);
export type RunStatus = z.infer<typeof RunStatus>;

/** Version 1 of the persisted run envelope. `snapshot` is the opaque persisted actor snapshot. */
export const RunSnapshotV1 = z.strictObject({
  $schemaVersion: z.literal(1),
  runId: Id,
  agentId: Id,
  surface: Id,
  status: RunStatus,
  parentRunId: Id.nullable(),
  updatedAt: Timestamp,
  snapshot: z.record(z.string(), z.unknown()),
});

/** A run snapshot in the current envelope version. */
export type RunSnapshot = z.infer<typeof RunSnapshotV1>;

/**
 * Parses and validates a persisted run envelope (JSON text or already-parsed data) from
 * `source` (a file or table row, named in errors). Refuses, before anything else happens:
 * text over MAX_SNAPSHOT_BYTES (`snapshot_too_large`), invalid JSON or a non-object
 * (`snapshot_malformed`), any `__proto__` / `constructor` / `prototype` key at any depth
 * (`forbidden_key`), a missing `$schemaVersion` (`snapshot_version_missing`), one that is not a
 * positive integer (`snapshot_version_malformed`), a newer one (`snapshot_version_future`), an
 * unknown older one (`snapshot_version_unsupported`), and fields that do not match their
 * version's schema (`snapshot_malformed`). Returns the envelope upgraded to the current version.
 * Error messages are scrubbed with `scrubber` when one is given.
 */
export function parseRunSnapshot(input: unknown, source: string, scrubber?: StringScrubber): RunSnapshot {
  try {
    return parseUnscrubbed(input, source);
  } catch (error) {
    if (scrubber === undefined || !(error instanceof RecordRejectedError)) throw error;
    throw new RecordRejectedError(error.code, scrubber.redactString(error.message), error.details);
  }
}

function parseUnscrubbed(input: unknown, source: string): RunSnapshot {
  let data = input;
  if (typeof input === 'string') {
    if (Buffer.byteLength(input, 'utf8') > MAX_SNAPSHOT_BYTES) {
      throw reject(RecordErrorCode.snapshotTooLarge, source, `is larger than ${MAX_SNAPSHOT_BYTES} bytes`);
    }
    try {
      data = JSON.parse(input) as unknown;
    } catch (error) {
      throw reject(
        RecordErrorCode.snapshotMalformed,
        source,
        `is not valid JSON (${(error as Error).message})`,
      );
    }
  }
  if (!isJsonObject(data)) {
    throw reject(RecordErrorCode.snapshotMalformed, source, 'is not a JSON object');
  }
  const forbidden = findForbiddenKey(data);
  if (forbidden !== null) {
    throw reject(RecordErrorCode.forbiddenKey, source, `contains the forbidden key at ${forbidden}`, {
      path: forbidden,
    });
  }
  if (!Object.prototype.hasOwnProperty.call(data, '$schemaVersion')) {
    throw reject(RecordErrorCode.snapshotVersionMissing, source, 'has no $schemaVersion');
  }
  const version = data.$schemaVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw reject(
      RecordErrorCode.snapshotVersionMalformed,
      source,
      `has $schemaVersion ${JSON.stringify(version) ?? String(version)}, which is not a positive integer`,
    );
  }
  if (version > SNAPSHOT_SCHEMA_VERSION) {
    throw reject(
      RecordErrorCode.snapshotVersionFuture,
      source,
      `has $schemaVersion ${version}, newer than this Snotra supports (${SNAPSHOT_SCHEMA_VERSION}); upgrade Snotra`,
      { version },
    );
  }
  if (!SUPPORTED_SNAPSHOT_VERSIONS.includes(version)) {
    throw reject(
      RecordErrorCode.snapshotVersionUnsupported,
      source,
      `has $schemaVersion ${version}, which this Snotra cannot load (supported: ${SUPPORTED_SNAPSHOT_VERSIONS.join(', ')})`,
      { version },
    );
  }
  const parsed = RunSnapshotV1.safeParse(data);
  if (!parsed.success) {
    throw reject(
      RecordErrorCode.snapshotMalformed,
      source,
      `does not match version ${version}:\n${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}

const isStatus = oneOf(RunStatus.options);
const ENVELOPE_KEYS = Object.keys(RunSnapshotV1.shape).length;
const isParent = nullable(FAST.id);

/**
 * One pass over an envelope rebuilt from a current row (its columns and its parsed payload):
 * the envelope itself when `parseRunSnapshot` would return it unchanged — the current
 * `$schemaVersion`, every column within its schema rule, the actor snapshot a plain object with
 * no forbidden key at any depth — else null, and the caller asks `parseRunSnapshot`, whose error
 * names the problem. A property test keeps "accepted here ⇒ accepted there, same value".
 */
export function acceptCurrentEnvelope(envelope: {
  readonly $schemaVersion: unknown;
  readonly runId: unknown;
  readonly agentId: unknown;
  readonly surface: unknown;
  readonly status: unknown;
  readonly parentRunId: unknown;
  readonly updatedAt: unknown;
  readonly snapshot: unknown;
}): RunSnapshot | null {
  const snapshot = envelope.snapshot;
  const ok =
    Object.keys(envelope).length === ENVELOPE_KEYS &&
    envelope.$schemaVersion === SNAPSHOT_SCHEMA_VERSION &&
    FAST.id(envelope.runId) &&
    FAST.id(envelope.agentId) &&
    FAST.id(envelope.surface) &&
    isStatus(envelope.status) &&
    isParent(envelope.parentRunId) &&
    FAST.timestamp(envelope.updatedAt) &&
    typeof snapshot === 'object' &&
    snapshot !== null &&
    Object.getPrototypeOf(snapshot) === Object.prototype &&
    findForbiddenKey(snapshot) === null;
  return ok ? (envelope as RunSnapshot) : null;
}

function reject(
  code: RecordErrorCode,
  source: string,
  problem: string,
  details: Record<string, unknown> = {},
): RecordRejectedError {
  return new RecordRejectedError(code, `run snapshot from ${source} ${problem}; it was not loaded`, {
    source,
    ...details,
  });
}
