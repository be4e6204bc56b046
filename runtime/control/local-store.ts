import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, Redactor, resolveDbPath, type Store } from '../../store/index.ts';
import { RUNTIME_FILE } from '../runtime-file.ts';

/** Raised when the state dir has no database (no runtime ever ran there). */
export class NoStateError extends Error {
  readonly code = 'no_state';
}

/**
 * Opens the store of a state dir for a CLI command, as the local user. The database and its
 * folder are 0600/0700: only the user who runs the runtime can open them.
 */
export function openLocalStore(stateDir: string, readonly: boolean): Store {
  const path = resolveDbPath({ stateDir });
  if (!existsSync(path)) throw new NoStateError(`no Snotra database at ${path} (is --state-dir right?)`);
  return openStore({ path, redactor: new Redactor(), readonly });
}

/** The pid of the runtime running on this state dir, or null. */
export function runtimePid(stateDir: string): number | null {
  try {
    const data = JSON.parse(readFileSync(join(stateDir, RUNTIME_FILE), 'utf8')) as { pid?: unknown };
    return typeof data.pid === 'number' && Number.isInteger(data.pid) ? data.pid : null;
  } catch {
    return null;
  }
}
