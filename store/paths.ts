import { join, resolve } from 'node:path';

/** The state directory used when none is configured, relative to the current folder. */
export const DEFAULT_STATE_DIR = '.snotra';

/**
 * The database file inside the state directory: `<stateDir>/snotra.db`, with SQLite's
 * `snotra.db-wal` and `snotra.db-shm` beside it while it is open.
 */
export const DB_FILE_NAME = 'snotra.db';

/** Where to find the database: an explicit file wins over a state directory. */
export interface DbLocation {
  /** An explicit database file. */
  readonly db?: string | undefined;
  /** A state directory holding `snotra.db` (default `./.snotra`). */
  readonly stateDir?: string | undefined;
}

/** Resolves a location to an absolute database path (`--db` wins over `--state-dir`). */
export function resolveDbPath(location: DbLocation = {}, cwd: string = process.cwd()): string {
  if (location.db !== undefined) return resolve(cwd, location.db);
  return resolve(cwd, join(location.stateDir ?? DEFAULT_STATE_DIR, DB_FILE_NAME));
}
