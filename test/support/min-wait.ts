/**
 * The shortest deadline any polling wait of the tests gets, whatever its caller asked. A wait
 * ends as soon as its condition holds, so a long deadline costs nothing when the code works; a
 * short one fails a working test on a loaded machine (CI, or two full runs at once on 2 cores).
 * No test relies on a wait running out.
 */
export const MIN_WAIT_MS = 20_000;
