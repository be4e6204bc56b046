/**
 * What changed in a root since a checkpoint, as a list a human reads before a rewind: paths
 * created, deleted, modified, renamed, changed in mode, in kind or in link target. Pure over two
 * trees (subtrees with equal hashes are skipped), read through `treeOf`.
 */
import type { Tree, TreeEntry } from './format.ts';

/** How a path changed since the checkpoint (the rewind undoes it). */
export const ChangeKind = {
  created: 'created',
  deleted: 'deleted',
  modified: 'modified',
  renamed: 'renamed',
  mode: 'mode',
  type: 'type',
  link: 'link',
} as const;
export type ChangeKind = (typeof ChangeKind)[keyof typeof ChangeKind];

/** One change, relative to its root. For `renamed`, `path` is where it was and `from` where it is now. */
export interface Change {
  readonly root: string;
  readonly path: string;
  readonly change: ChangeKind;
  readonly from?: string;
}

interface Leaf {
  readonly path: string;
  readonly entry: TreeEntry;
}

function byName(tree: Tree | null): Map<string, TreeEntry> {
  return new Map((tree?.entries ?? []).map((e) => [e.name, e]));
}

/** Every file, symlink and empty folder under (and including) an entry. */
function leaves(entry: TreeEntry, path: string, treeOf: (hash: string) => Tree, out: Leaf[]): void {
  if (entry.type !== 'dir') {
    out.push({ path, entry });
    return;
  }
  const tree = treeOf(entry.hash);
  if (tree.entries.length === 0) out.push({ path, entry });
  for (const child of tree.entries) leaves(child, `${path}/${child.name}`, treeOf, out);
}

/**
 * The changes from tree `then` (the checkpoint's) to tree `now` of root `root`, sorted by path;
 * a file deleted at one path and created with the same contents at another is one `renamed`.
 */
export function diffTrees(root: string, then: string, now: string, treeOf: (hash: string) => Tree): Change[] {
  const changes: Change[] = [];
  const created: Leaf[] = [];
  const deleted: Leaf[] = [];
  const walk = (a: string | null, b: string | null, rel: string): void => {
    if (a === b) return;
    const before = byName(a === null ? null : treeOf(a));
    const after = byName(b === null ? null : treeOf(b));
    const names = [...new Set([...before.keys(), ...after.keys()])].sort();
    for (const name of names) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const x = before.get(name);
      const y = after.get(name);
      if (x === undefined && y !== undefined) leaves(y, path, treeOf, created);
      else if (y === undefined && x !== undefined) leaves(x, path, treeOf, deleted);
      else if (x !== undefined && y !== undefined) {
        if (x.type !== y.type) changes.push({ root, path, change: 'type' });
        else if (x.type === 'dir' && y.type === 'dir') {
          if (x.mode !== y.mode) changes.push({ root, path, change: 'mode' });
          walk(x.hash, y.hash, path);
        } else if (x.type === 'file' && y.type === 'file') {
          if (x.hash !== y.hash) changes.push({ root, path, change: 'modified' });
          else if (x.mode !== y.mode) changes.push({ root, path, change: 'mode' });
        } else if (x.type === 'symlink' && y.type === 'symlink' && x.target !== y.target) {
          changes.push({ root, path, change: 'link' });
        }
      }
    }
  };
  walk(then, now, '');
  const unmatched = new Map<string, Leaf[]>();
  for (const c of created) {
    if (c.entry.type !== 'file') continue;
    const list = unmatched.get(c.entry.hash) ?? [];
    list.push(c);
    unmatched.set(c.entry.hash, list);
  }
  const renamedFrom = new Set<string>();
  for (const d of deleted) {
    const twin = d.entry.type === 'file' ? unmatched.get(d.entry.hash)?.shift() : undefined;
    if (twin !== undefined) {
      renamedFrom.add(twin.path);
      changes.push({ root, path: d.path, change: 'renamed', from: twin.path });
    } else changes.push({ root, path: d.path, change: 'deleted' });
  }
  for (const c of created)
    if (!renamedFrom.has(c.path)) changes.push({ root, path: c.path, change: 'created' });
  return changes.sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
}
