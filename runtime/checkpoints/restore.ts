/**
 * Puts a root back as a checkpoint holds it: contents, created and deleted paths, folders,
 * modes and symlinks. It never writes through a symlink: it works only in folders it has just
 * checked are real folders at their own path (no symlink on the way, by `realpath`), writes a
 * file to a fresh temporary name and renames it over the old entry (which replaces a symlink
 * rather than following it), creates symlinks without following them, and changes modes through
 * a descriptor opened with O_NOFOLLOW. What the exclusion rule leaves out (now, or when the
 * checkpoint was taken) is left as it is.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';
import { exclusionRule, type EntryKind } from './exclusion.ts';
import type { CheckpointRoot } from './format.ts';
import { sha256, type ObjectStore } from './objects.ts';

/** Raised when a root cannot be restored safely; nothing outside the root was touched. */
export class RestoreError extends Error {
  constructor(
    readonly code: 'root_moved' | 'unsafe_path',
    message: string,
  ) {
    super(message);
    this.name = 'RestoreError';
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function kindOf(st: Stats): EntryKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'special';
}

/** That `abs` is a real folder at its own path (no symlink anywhere on it), now. */
function assertRealDir(abs: string): void {
  const st = lstatOrNull(abs);
  let real: string | null = null;
  try {
    real = realpathSync(abs);
  } catch {
    real = null;
  }
  if (st === null || !st.isDirectory() || real !== abs)
    throw new RestoreError(
      'unsafe_path',
      `${abs} is no longer a folder at its own path (a symlink on the way?); the rewind stopped there`,
    );
}

/** Sets the mode of the file or folder at `abs` without following a symlink there. */
function chmodNoFollow(abs: string, mode: number, dir: boolean): void {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | (dir ? constants.O_DIRECTORY : 0);
  const fd = openSync(abs, flags);
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/** Removes `abs` (a folder with everything in it, a file or a symlink), following no symlink. */
function removeTree(abs: string): void {
  const st = lstatOrNull(abs);
  if (st === null) return;
  if (!st.isDirectory() || st.isSymbolicLink()) {
    unlinkSync(abs);
    return;
  }
  assertRealDir(abs);
  chmodNoFollow(abs, 0o700, true);
  for (const name of readdirSync(abs)) removeTree(join(abs, name));
  rmdirSync(abs);
}

/** What restoring a root did. */
export interface RestoreCounts {
  written: number;
  removed: number;
  linked: number;
  folders: number;
  modes: number;
}

/**
 * Restores `root` from `store`; `stateDir` (canonical) is never touched when it lies inside.
 * `current` is the tree of the root as a scan just saw it (the rewind's own checkpoint): a
 * folder whose tree is unchanged is not visited, and a file whose hash is unchanged is not read
 * again (its kind and size are still checked on disk).
 */
export function restoreRoot(
  store: ObjectStore,
  root: CheckpointRoot,
  stateDir: string | null,
  current: string | null = null,
): RestoreCounts {
  const st = lstatOrNull(root.path);
  let real: string | null = null;
  try {
    real = realpathSync(root.path);
  } catch {
    real = null;
  }
  if (st === null || !st.isDirectory() || real !== root.path)
    throw new RestoreError(
      'root_moved',
      `root ${root.id} is no longer a folder at ${root.path}; nothing was restored there`,
    );
  const rule = exclusionRule(root.deny, stateDir);
  const excludedThen = new Set(root.excluded.map((e) => e.path));
  const counts: RestoreCounts = { written: 0, removed: 0, linked: 0, folders: 0, modes: 0 };

  const restoreDir = (abs: string, rel: string, hash: string, mode: number, seen: string | null): void => {
    assertRealDir(abs);
    const before = lstatSync(abs).mode & 0o7777;
    if (seen === hash) {
      if (before !== mode) {
        chmodNoFollow(abs, mode, true);
        counts.modes++;
      }
      return;
    }
    const seenEntries = new Map(
      seen === null ? [] : store.readTree(seen).entries.map((e) => [e.name, e] as const),
    );
    // The owner needs to write and enter it while it is restored; its own mode is set last.
    if ((before & 0o700) !== 0o700) chmodNoFollow(abs, before | 0o700, true);
    const wanted = new Map(store.readTree(hash).entries.map((e) => [e.name, e]));
    for (const name of readdirSync(abs)) {
      if (wanted.has(name)) continue;
      const childAbs = join(abs, name);
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const cur = lstatSync(childAbs);
      if (excludedThen.has(childRel) || rule.reason(childRel, name, kindOf(cur), cur.size, childAbs) !== null)
        continue;
      removeTree(childAbs);
      counts.removed++;
    }
    for (const entry of wanted.values()) {
      const childAbs = join(abs, entry.name);
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const cur = lstatOrNull(childAbs);
      if (entry.type === 'symlink') {
        if (cur?.isSymbolicLink() === true && readlinkOrNull(childAbs) === entry.target) continue;
        if (cur !== null) removeTree(childAbs);
        assertRealDir(abs);
        symlinkSync(entry.target, childAbs);
        counts.linked++;
      } else if (entry.type === 'file') {
        const was = seenEntries.get(entry.name);
        const same = was?.type === 'file' && was.hash === entry.hash;
        if (
          cur?.isFile() === true &&
          cur.size === entry.size &&
          (same || sameContents(childAbs, entry.hash))
        ) {
          if ((cur.mode & 0o7777) !== entry.mode) {
            chmodNoFollow(childAbs, entry.mode, false);
            counts.modes++;
          }
          continue;
        }
        const data = store.readBlob(entry.hash);
        assertRealDir(abs);
        const tmp = join(abs, `.snotra-rewind-${randomBytes(6).toString('hex')}`);
        writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
        chmodNoFollow(tmp, entry.mode, false);
        if (cur?.isDirectory() === true) removeTree(childAbs);
        renameSync(tmp, childAbs);
        counts.written++;
      } else {
        if (cur !== null && !(cur.isDirectory() && !cur.isSymbolicLink())) removeTree(childAbs);
        if (cur === null || !cur.isDirectory()) {
          assertRealDir(abs);
          mkdirSync(childAbs, { mode: 0o700 });
          counts.folders++;
        }
        const was = seenEntries.get(entry.name);
        const kept = cur !== null && cur.isDirectory() && !cur.isSymbolicLink() && was?.type === 'dir';
        restoreDir(childAbs, childRel, entry.hash, entry.mode, kept ? was.hash : null);
      }
    }
    if ((lstatSync(abs).mode & 0o7777) !== mode) {
      chmodNoFollow(abs, mode, true);
      if (mode !== before) counts.modes++;
    }
  };
  restoreDir(root.path, '', root.tree, root.mode, current);
  return counts;
}

function readlinkOrNull(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

function sameContents(path: string, hash: string): boolean {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return sha256(readFileSync(fd)) === hash;
  } finally {
    closeSync(fd);
  }
}
