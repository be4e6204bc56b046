/**
 * The shortest deadline any polling wait of the tests gets, whatever its caller asked. A wait
 * ends as soon as its condition holds, so a long deadline costs nothing when the code works; a
 * short one fails a working test on a loaded machine (CI, or two full runs at once on 2 cores).
 * No test relies on a wait running out.
 */
export const MIN_WAIT_MS = 20_000;

/**
 * How long a polling wait sleeps before its next look, having waited `waitedMs` so far: `firstMs`
 * at first, then an eighth of the time waited, up to `maxMs`. A condition that holds soon is seen
 * soon; a long wait (a process starting, a run on a loaded machine) looks a few times a second
 * instead of fifty: each look opens a store or spawns a CLI, and those looks took CPU from the
 * very processes the test waits for (a poll every 20 ms of a read-only store is ~13% of a core).
 */
export function pollDelayMs(waitedMs: number, firstMs = 20, maxMs = 200): number {
  return Math.min(maxMs, Math.max(firstMs, Math.round(waitedMs / 8)));
}
