/**
 * Reads one root into tree objects without following a symlink: a file's contents are hashed
 * only when its size, mtime, ctime, inode or mode differ from what the last scan of that path saw
 * (the prefilter), so a checkpoint of a large root with a few changed files reads only those.
 * With a store, new contents and trees are written to it; without one (a dry scan, for a diff)
 * nothing is written and the trees are returned.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { exclusionRule, type EntryKind } from './exclusion.ts';
import type { CheckpointRoot, Tree, TreeEntry } from './format.ts';
import { sha256, treeHash, type ObjectStore } from './objects.ts';

/** What a file looked like when it was last hashed. */
interface StatKey {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly mode: number;
  readonly hash: string;
}

/** The prefilter's memory: per root, per absolute path, the last stat and hash seen. */
export class StatCache {
  readonly #roots = new Map<string, Map<string, StatKey>>();

  /** The entries of `root` (read), and a fresh map to fill during a scan (it replaces them after). */
  begin(root: string): { previous: ReadonlyMap<string, StatKey>; next: Map<string, StatKey> } {
    return { previous: this.#roots.get(root) ?? new Map(), next: new Map() };
  }

  end(root: string, next: Map<string, StatKey>): void {
    this.#roots.set(root, next);
  }
}

/** The root to scan: canonical path, `deny` globs, and the state dir (canonical) to leave out. */
export interface ScanTarget {
  readonly id: string;
  readonly path: string;
  readonly deny: readonly string[];
  readonly stateDir: string | null;
}

/** What a scan found: the root's tree, every tree made (by hash), what was excluded, and its cost. */
export interface ScanResult {
  readonly root: CheckpointRoot;
  readonly trees: ReadonlyMap<string, Tree>;
  readonly hashed: number;
  readonly files: number;
  /** Bytes of new contents written to the store. */
  readonly storedBytes: number;
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
export function scanRoot(target: ScanTarget, store: ObjectStore | null, cache: StatCache): ScanResult {
  const rule = exclusionRule(target.deny, target.stateDir);
  const { previous, next } = cache.begin(target.path);
  const trees = new Map<string, Tree>();
  const excluded: CheckpointRoot['excluded'] = [];
  let hashed = 0;
  let files = 0;
  let storedBytes = 0;

  const scanDir = (abs: string, rel: string): string => {
    const entries: TreeEntry[] = [];
    // The root itself must be readable; a folder in it may vanish while the scan runs.
    const names = (rel === '' ? readdirSync(abs) : (gone(() => readdirSync(abs)) ?? [])).sort();
    for (const name of names) {
      const childAbs = join(abs, name);
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const st = gone(() => lstatSync(childAbs));
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
        const seen = previous.get(childAbs);
        let hash: string;
        let size = st.size;
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
          if (store !== null && !store.has(hash)) {
            store.putBlob(hash, data);
            storedBytes += data.length;
          }
        }
        // Changed while it was read: not remembered, so the next scan reads it again.
        if (size === st.size)
          next.set(childAbs, {
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
    const tree: Tree = { v: 1, entries };
    const computed = treeHash(tree);
    if (store !== null) {
      if (!store.has(computed.hash)) storedBytes += computed.text.length;
      store.putTree(tree, computed);
    }
    trees.set(computed.hash, tree);
    return computed.hash;
  };

  const rootMode = lstatSync(target.path).mode & 0o7777;
  const tree = scanDir(target.path, '');
  cache.end(target.path, next);
  return {
    root: { id: target.id, path: target.path, mode: rootMode, deny: [...target.deny], tree, excluded },
    trees,
    hashed,
    files,
    storedBytes,
  };
}
