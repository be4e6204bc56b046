/**
 * The app window's Chromium profile: a folder in the temp dir, made at launch and removed when the
 * window closes. A shell that could not close it (killed with SIGKILL, a power cut) leaves its
 * profile behind, so each launch first removes the profiles of shells that no longer run.
 *
 * The rule for a leftover: a folder (not a symlink) named `snotra-app-profile-<pid>-<suffix>`,
 * owned by this user, whose `<pid>` is not this process and is not alive (a zombie counts as
 * gone). A pid that was reused by another live process keeps its folder until that process is
 * gone too; a folder of another name or owner is never touched.
 */
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../../runtime/index.ts';

export const PROFILE_PREFIX = 'snotra-app-profile-';

const LEFTOVER = /^snotra-app-profile-([1-9]\d{0,6})-[A-Za-z0-9]{6}$/;

/** The largest pid Linux can give (`pid_max` is at most 2^22); macOS and the BSDs stay far below it. */
const MAX_PID = 4_194_303;

/** Makes this launch's profile folder: `<tmp>/snotra-app-profile-<pid>-<6 random characters>`. */
export function makeProfileDir(tmp: string = tmpdir(), pid: number = process.pid): string {
  return mkdtempSync(join(tmp, `${PROFILE_PREFIX}${pid}-`));
}

/**
 * Removes the profiles that shells no longer running left in `tmp`; returns the folders removed.
 * Best effort: a folder that cannot be read or removed is left, and never fails the launch.
 */
export function sweepLeftoverProfiles(
  tmp: string = tmpdir(),
  alive: (pid: number) => boolean = isProcessAlive,
  self: number = process.pid,
  uid: number | undefined = process.getuid?.(),
): string[] {
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(LEFTOVER.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid > MAX_PID || pid === self || alive(pid)) continue;
    const path = join(tmp, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}
