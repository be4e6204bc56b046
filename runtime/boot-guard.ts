import { lstatSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_SOCKET } from './control/socket.ts';

/** A boot step that failed: names what failed and where; the runtime left nothing behind. */
export class BootError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = 'BootError';
  }
}

/**
 * The longest Unix socket path the OS accepts, in bytes (`sun_path` less its NUL): 107 on Linux,
 * 103 on macOS and the BSDs.
 */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

/**
 * Checks, before anything is created, what would make boot fail half-way: a state dir that is
 * not a directory, and a control socket path longer than the OS allows.
 */
export function preflightStateDir(stateDir: string): void {
  let isDir: boolean | null = null;
  try {
    isDir = statSync(stateDir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT')
      throw new BootError('state_dir_unusable', `stateDir ${stateDir}: cannot be used (${code ?? 'error'})`, {
        cause: err,
      });
  }
  if (isDir === false)
    throw new BootError('state_dir_unusable', `stateDir ${stateDir}: exists and is not a directory`);
  const socket = join(stateDir, CONTROL_SOCKET);
  const bytes = Buffer.byteLength(socket);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new BootError(
      'socket_path_too_long',
      `stateDir ${stateDir}: the control socket path ${socket} is ${bytes} bytes, longer than the ` +
        `${MAX_SOCKET_PATH_BYTES} bytes a Unix socket path may have here; set a shorter stateDir`,
    );
  }
}

/**
 * What one start put into the state dir, so a failed boot can take it out again: the dir itself
 * when this start made it, else every top-level entry that was not there before. Safe because the
 * runtime holds the state dir's lock while it boots: nobody else writes there.
 */
export class StateDirFootprint {
  readonly #before: ReadonlySet<string> | null;
  /** The outermost folder this start created (the state dir or an ancestor), or null. */
  readonly #created: string | null;

  private constructor(
    readonly stateDir: string,
    before: ReadonlySet<string> | null,
    created: string | null,
  ) {
    this.#before = before;
    this.#created = created;
  }

  /** Creates the state dir (mode 0700) when missing and remembers what was in it. */
  static take(stateDir: string): StateDirFootprint {
    try {
      return new StateDirFootprint(stateDir, new Set(readdirSync(stateDir)), null);
    } catch {
      const created = mkdirSync(stateDir, { recursive: true, mode: 0o700 }) ?? null;
      return new StateDirFootprint(stateDir, null, created);
    }
  }

  /** Removes the state dir only when this start created it (nothing else can be in it yet). */
  undoCreatedDir(): void {
    if (this.#before === null && this.#created !== null)
      rmSync(this.#created, { recursive: true, force: true });
  }

  /** Removes what this start added (the whole dir when it made it). */
  undo(): void {
    if (this.#before === null) {
      if (this.#created !== null) rmSync(this.#created, { recursive: true, force: true });
      return;
    }
    let now: string[];
    try {
      now = readdirSync(this.stateDir);
    } catch {
      return;
    }
    for (const name of now) {
      if (this.#before.has(name)) continue;
      const path = join(this.stateDir, name);
      try {
        lstatSync(path);
        rmSync(path, { recursive: true, force: true });
      } catch {
        // Already gone.
      }
    }
  }
}
