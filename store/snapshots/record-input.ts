import { z } from 'zod';
import type { StringScrubber } from '../errors.ts';
import { isJsonObject } from '../json.ts';
import { parseInput } from '../schema.ts';
import { acceptCurrentEnvelope, parseRunSnapshot, type RunSnapshot } from './format.ts';

/** A revision a compare-and-set names: a positive integer (every backend's first write is 1 or more). */
const Revision = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

/**
 * Checks the revision a compare-and-set write names, the same way for every run record backend
 * (the SQLite store and the cluster's run records). Throws `RecordRejectedError`
 * (`invalid_input`) naming `where` and `revision`.
 */
export function checkRevision(revision: unknown, where: string, scrubber: StringScrubber): number {
  return parseInput(Revision, revision, `${where} revision`, scrubber);
}

/**
 * Checks a run's record as a backend is given it to write: a run snapshot envelope that
 * `parseRunSnapshot` accepts (an envelope of the current version is checked in one pass, without
 * a copy). Returns it, upgraded to the current version; throws `RecordRejectedError` naming
 * `where` and the bad field otherwise (scrubbed of registered secrets).
 */
export function checkRunRecord(record: unknown, where: string, scrubber: StringScrubber): RunSnapshot {
  const current = isJsonObject(record)
    ? acceptCurrentEnvelope(record as Parameters<typeof acceptCurrentEnvelope>[0])
    : null;
  return current ?? parseRunSnapshot(record, where, scrubber);
}
