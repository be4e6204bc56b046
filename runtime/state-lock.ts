import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The lock file inside a state dir (an empty SQLite file whose exclusive lock is the lock). */
export const LOCK_FILE = 'runtime.lock';
/** Beside the lock: the holder's pid, for the message a second runtime prints. */
export const LOCK_OWNER_FILE = 'runtime.lock.owner';

/** Thrown when another live process holds the state dir; names the dir and the holder's pid. */
export class StateDirLockedError extends Error {
  readonly code = 'state_dir_locked';
  constructor(
    readonly stateDir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `state dir ${stateDir} is in use by another Snotra runtime` +
        `${holderPid === null ? '' : ` (pid ${holderPid})`}; only one runtime may run on a state dir. ` +
        'Stop it first, or give this one another stateDir.',
    );
    this.name = 'StateDirLockedError';
  }
}

/** A held state-dir lock. */
export interface StateLock {
  /** Releases the lock (idempotent). `removeFiles` also deletes the lock files (boot failure of a start that created them). */
  release(removeFiles?: boolean): void;
}

function readOwner(stateDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(stateDir, LOCK_OWNER_FILE), 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes the exclusive lock of a state dir for the life of this runtime, or throws
 * `StateDirLockedError` at once. The lock is an OS file lock (SQLite's exclusive lock on
 * `runtime.lock`, i.e. `fcntl` on POSIX, `LockFileEx` on Windows): the kernel releases it when the
 * holder dies in any way, SIGKILL included, so a dead runtime never blocks the next start. It is
 * exclusive between processes and between runtimes of one process. Only the runtime takes it:
 * read-only CLI commands open the database, not this file, and keep working beside a runtime.
 * The state dir must exist.
 */
export function acquireStateLock(stateDir: string): StateLock {
  const file = join(stateDir, LOCK_FILE);
  let created = false;
  try {
    closeSync(openSync(file, 'wx', 0o600));
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 0');
    // No journal file: the lock never writes a page.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY')
      throw new StateDirLockedError(stateDir, readOwner(stateDir));
    throw err;
  }
  writeFileSync(join(stateDir, LOCK_OWNER_FILE), String(process.pid), { mode: 0o600 });
  let held = true;
  return {
    release(removeFiles = false) {
      if (!held) return;
      held = false;
      rmSync(join(stateDir, LOCK_OWNER_FILE), { force: true });
      // Delete the file only while still holding it, and only when this start made it.
      if (removeFiles && created) rmSync(file, { force: true });
      db.close();
    },
  };
}
