/**
 * How many runs a fast-check law gets. Every law asks `runs(n)` for its usual count; the deep
 * mode (`npm run test:laws:deep`) sets SNOTRA_LAWS_SCALE=100, so each law runs 100× as often,
 * where a counterexample of one run in thousands shows up. Unset, the scale is 1.
 */
const ENV = 'SNOTRA_LAWS_SCALE';

function readScale(): number {
  const raw = process.env[ENV];
  if (raw === undefined || raw.trim() === '') return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new Error(`${ENV} must be a positive number (the factor on every law's numRuns), got '${raw}'`);
  }
  return scale;
}

/** The scale on every law's runs: SNOTRA_LAWS_SCALE, 1 when unset. */
export const LAWS_SCALE = readScale();

/** `n` runs at the usual scale; n × SNOTRA_LAWS_SCALE (at least 1) in the deep mode. */
export function runs(n: number): number {
  return Math.max(1, Math.round(n * LAWS_SCALE));
}

/**
 * For a law that drives real processes or servers on each run, where 100× would take hours: n ×
 * the scale, but no more than `cap` (and never fewer than n). The caller says why in a comment.
 */
export function cappedRuns(n: number, cap: number): number {
  return Math.max(n, Math.min(runs(n), cap));
}
