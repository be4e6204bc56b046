/**
 * Reads one root into tree objects without following a symlink: a file's contents are hashed
 * only when its size, mtime, ctime, inode or mode differ from what the last scan of that path saw
 * (the prefilter), so a checkpoint of a large root with a few changed files reads only those. A
 * file is remembered only when its timestamps are older than the scan's start (`scan-fs.ts`: a
 * racily clean file is read again next time).
 * With a store, new contents and trees are written to it; without one (a dry scan, for a diff)
 * nothing is written and the trees are returned.
 */
import { readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { exclusionRule, type EntryKind } from './exclusion.ts';
import type { CheckpointRoot, Tree, TreeEntry } from './format.ts';
import { sha256, treeHash, type ObjectStore } from './objects.ts';
import { settledBefore, type ScanFs } from './scan-fs.ts';

/** What a file looked like when it was last hashed. */
export interface StatKey {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly mode: number;
  readonly hash: string;
}

/** A folder as the last scan made it: its tree object and that tree's hash. */
interface DirKey {
  readonly tree: Tree;
  readonly hash: string;
}

/** What one scan of a root remembers for the next: files by absolute path, folders likewise. */
interface Memory {
  readonly files: Map<string, StatKey>;
  readonly dirs: Map<string, DirKey>;
}

/**
 * The prefilter's memory: per root, per absolute path, the last stat and hash of each file, and
 * the last tree of each folder (a folder whose entries all compare equal keeps its tree's hash
 * without serializing and hashing it again).
 */
export class StatCache {
  readonly #roots = new Map<string, Memory>();

  /** The memory of `root` (read), and a fresh one to fill during a scan (it replaces it after). */
  begin(root: string): { previous: Memory; next: Memory } {
    return {
      previous: this.#roots.get(root) ?? { files: new Map(), dirs: new Map() },
      next: { files: new Map(), dirs: new Map() },
    };
  }

  end(root: string, next: Memory): void {
    this.#roots.set(root, next);
  }

  /** The files remembered for `root` (absolute path → stat and hash), if any. */
  files(root: string): ReadonlyMap<string, StatKey> | undefined {
    return this.#roots.get(root)?.files;
  }

  /** Remembers `files` for `root` (read back from the prefilter file) unless it has a memory already. */
  seed(root: string, files: Map<string, StatKey>): void {
    if (!this.#roots.has(root)) this.#roots.set(root, { files, dirs: new Map() });
  }
}

/** Whether two entries of a folder say the same thing (name, type, mode, size, hash, target). */
function sameEntry(a: TreeEntry, b: TreeEntry): boolean {
  if (a.name !== b.name || a.type !== b.type) return false;
  if (a.type === 'symlink') return b.type === 'symlink' && a.target === b.target;
  if (a.type === 'dir') return b.type === 'dir' && a.mode === b.mode && a.hash === b.hash;
  return b.type === 'file' && a.mode === b.mode && a.size === b.size && a.hash === b.hash;
}

function sameEntries(a: readonly TreeEntry[], b: readonly TreeEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameEntry(a[i] as TreeEntry, b[i] as TreeEntry)) return false;
  return true;
}

/** The root to scan: canonical path, `deny` globs, and the state dir (canonical) to leave out. */
export interface ScanTarget {
  readonly id: string;
  readonly path: string;
  readonly deny: readonly string[];
  readonly stateDir: string | null;
  /** The file system's time when the scan started (`ScanFs.now`). */
  readonly scanStart: number;
}

/** What a scan found: the root's tree, every tree made (by hash), what was excluded, and its cost. */
export interface ScanResult {
  readonly root: CheckpointRoot;
  readonly trees: ReadonlyMap<string, Tree>;
  readonly hashed: number;
  readonly files: number;
  /** Bytes of new contents written to the store. */
  readonly storedBytes: number;
  /** Files not remembered because they changed in the scan's timestamp tick or later. */
  readonly racy: number;
}

/**
 * `read()`, or null when what it reads vanished meanwhile (another process deleted it while the
 * scan ran): a path gone before it was read is not in the checkpoint, rather than failing it.
 */
function gone<T>(read: () => T): T | null {
  try {
    return read();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

function kindOf(st: Stats): EntryKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'special';
}

/** Scans `target`; writes to `store` unless it is null. */
export function scanRoot(
  target: ScanTarget,
  store: ObjectStore | null,
  cache: StatCache,
  fs: Pick<ScanFs, 'lstat'>,
): ScanResult {
  const rule = exclusionRule(target.deny, target.stateDir);
  const { previous, next } = cache.begin(target.path);
  const trees = new Map<string, Tree>();
  const excluded: CheckpointRoot['excluded'] = [];
  let hashed = 0;
  let files = 0;
  let storedBytes = 0;
  let racy = 0;

  const scanDir = (abs: string, rel: string): string => {
    const entries: TreeEntry[] = [];
    // The root itself must be readable; a folder in it may vanish while the scan runs.
    const names = (rel === '' ? readdirSync(abs) : (gone(() => readdirSync(abs)) ?? [])).sort();
    // `abs` is canonical: it ends with a separator only when it is the file system's root.
    const prefix = abs.endsWith(sep) ? abs : `${abs}${sep}`;
    for (const name of names) {
      const childAbs = prefix + name;
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const st = gone(() => fs.lstat(childAbs)) ?? null;
      if (st === null) continue;
      const kind = kindOf(st);
      const why = rule.reason(childRel, name, kind, st.size, childAbs);
      if (why !== null) {
        excluded.push({ path: childRel, reason: why });
        continue;
      }
      const mode = st.mode & 0o7777;
      if (kind === 'symlink') {
        const target = gone(() => readlinkSync(childAbs));
        if (target !== null) entries.push({ name, type: 'symlink', target });
      } else if (kind === 'dir') {
        entries.push({ name, type: 'dir', mode, hash: scanDir(childAbs, childRel) });
      } else {
        files++;
        const seen = previous.files.get(childAbs);
        let hash: string;
        let size = st.size;
        let hashedNow = false;
        if (
          seen !== undefined &&
          seen.size === st.size &&
          seen.mtimeMs === st.mtimeMs &&
          seen.ctimeMs === st.ctimeMs &&
          seen.ino === st.ino &&
          seen.mode === mode &&
          (store === null || store.has(seen.hash))
        ) {
          hash = seen.hash;
        } else {
          const data = gone(() => readFileSync(childAbs));
          if (data === null) continue;
          hash = sha256(data);
          size = data.length;
          hashed++;
          hashedNow = true;
          if (store !== null && !store.has(hash)) {
            store.putBlob(hash, data);
            storedBytes += data.length;
          }
        }
        // Changed while it was read, or racily clean (changed in the scan's timestamp tick or
        // later): not remembered, so the next scan reads it again.
        if (seen !== undefined && seen.hash === hash && hashedNow === false) next.files.set(childAbs, seen);
        else if (!settledBefore(st, target.scanStart)) racy++;
        else if (size === st.size)
          next.files.set(childAbs, {
            size: st.size,
            mtimeMs: st.mtimeMs,
            ctimeMs: st.ctimeMs,
            ino: st.ino,
            mode,
            hash,
          });
        entries.push({ name, type: 'file', mode, size, hash });
      }
    }
    const last = previous.dirs.get(abs);
    if (
      last !== undefined &&
      sameEntries(last.tree.entries, entries) &&
      (store === null || store.has(last.hash))
    ) {
      next.dirs.set(abs, last);
      trees.set(last.hash, last.tree);
      return last.hash;
    }
    const tree: Tree = { v: 1, entries };
    const computed = treeHash(tree);
    if (store !== null) {
      if (!store.has(computed.hash)) storedBytes += computed.text.length;
      store.putTree(tree, computed);
    }
    next.dirs.set(abs, { tree, hash: computed.hash });
    trees.set(computed.hash, tree);
    return computed.hash;
  };

  const rootStat = fs.lstat(target.path);
  if (rootStat === undefined) throw new Error(`root ${target.path} is gone`);
  const rootMode = rootStat.mode & 0o7777;
  const tree = scanDir(target.path, '');
  cache.end(target.path, next);
  return {
    root: { id: target.id, path: target.path, mode: rootMode, deny: [...target.deny], tree, excluded },
    trees,
    hashed,
    files,
    storedBytes,
    racy,
  };
}
