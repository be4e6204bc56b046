import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';

/** The environment variables the default state dir depends on. */
export interface StateEnv {
  readonly HOME?: string | undefined;
  readonly XDG_STATE_HOME?: string | undefined;
  readonly LOCALAPPDATA?: string | undefined;
}

/** The user's home folder: `$HOME` when set, else the OS's answer. */
export function homeOf(env: StateEnv): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
}

/**
 * Where per-user runtime state lives: `$XDG_STATE_HOME/snotra` (an absolute value only, as the
 * XDG spec says), else `~/.local/state/snotra`; on Windows `%LOCALAPPDATA%\snotra\state`.
 */
export function stateBase(env: StateEnv, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32' && env.LOCALAPPDATA !== undefined && isAbsolute(env.LOCALAPPDATA))
    return join(env.LOCALAPPDATA, 'snotra', 'state');
  if (env.XDG_STATE_HOME !== undefined && isAbsolute(env.XDG_STATE_HOME))
    return join(env.XDG_STATE_HOME, 'snotra');
  return join(homeOf(env), '.local', 'state', 'snotra');
}

/**
 * The default state dir of a workspace: `<stateBase>/<name>-<hash>`, outside the workspace so a
 * command that wipes or opens up the primary root (`rm -rf .`, `git clean -fdx`) cannot reach the
 * runtime's database. `name` is the primary root's folder name (letters, digits, `.`, `_`, `-`;
 * at most 24, short enough that `<dir>/control.sock` stays within the Unix socket path limit);
 * `hash` is the first 12 hex digits of the SHA-256 of the root's real path, so each workspace has
 * its own state and a symlinked spelling of the same folder finds the same one. Reads only.
 */
export function defaultStateDir(primaryRoot: string, env: StateEnv): string {
  let root = resolve(primaryRoot);
  try {
    root = realpathSync(root);
  } catch {
    // A missing root is reported by the path checks; the resolved spelling names it meanwhile.
  }
  const name =
    basename(root)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 24)
      .replace(/^\.+/, '') || 'root';
  const hash = createHash('sha256').update(root).digest('hex').slice(0, 12);
  return join(stateBase(env), `${name}-${hash}`);
}
