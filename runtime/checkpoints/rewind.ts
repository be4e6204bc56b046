/**
 * Rewinding roots to a checkpoint, and listing checkpoints with what changed since each. A
 * rewind first checkpoints the roots as they are (tool `rewind`), so it can itself be undone,
 * then computes the diff from that checkpoint and restores each root.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unifiedDiff } from '../approvals/unified-diff.ts';
import { Checkpointer } from './checkpointer.ts';
import { diffTrees, type Change } from './diff.ts';
import type { CheckpointRecord, Tree, TreeEntry } from './format.ts';
import { restoreRoot, type RestoreCounts } from './restore.ts';

/** A checkpoint as `snotra rewind --list` shows it. */
export interface CheckpointSummary {
  readonly id: string;
  readonly at: number;
  readonly runId: string | null;
  readonly callId: string | null;
  readonly sessionId: string | null;
  readonly tool: string;
  readonly roots: readonly { readonly id: string; readonly path: string; readonly excluded: number }[];
  /** Paths changed since the checkpoint (what rewinding to it undoes). */
  readonly changedSince: readonly Change[];
}

/** Which checkpoints to list. */
export interface CheckpointFilter {
  readonly runId?: string;
  readonly sessionId?: string;
}

/** What a rewind did (or, dry, would do). */
export interface RewindReport {
  readonly checkpoint: CheckpointSummary;
  readonly dryRun: boolean;
  readonly changes: readonly Change[];
  /** Unified diffs (current → checkpoint) of modified text files, capped. */
  readonly patches: readonly { readonly root: string; readonly path: string; readonly diff: string }[];
  /** The checkpoint taken just before the restore: rewind to it to undo this rewind. */
  readonly undo: string | null;
  readonly restored: readonly ({ readonly root: string } & RestoreCounts)[];
}

const MAX_PATCH_BYTES = 256 * 1024;
const MAX_PATCHES = 50;

function summary(record: CheckpointRecord, changedSince: readonly Change[]): CheckpointSummary {
  return {
    id: record.id,
    at: record.at,
    runId: record.runId,
    callId: record.callId,
    sessionId: record.sessionId,
    tool: record.tool,
    roots: record.roots.map((r) => ({ id: r.id, path: r.path, excluded: r.excluded.length })),
    changedSince,
  };
}

function treeReader(checkpoints: Checkpointer, extra: ReadonlyMap<string, Tree>): (hash: string) => Tree {
  return (hash) => extra.get(hash) ?? checkpoints.store.readTree(hash);
}

function entryAt(treeOf: (h: string) => Tree, tree: string, path: string): TreeEntry | null {
  let current: string | null = tree;
  let found: TreeEntry | null = null;
  for (const name of path.split('/')) {
    if (current === null) return null;
    found = treeOf(current).entries.find((e) => e.name === name) ?? null;
    current = found?.type === 'dir' ? found.hash : null;
  }
  return found;
}

function text(data: Buffer): string | null {
  if (data.length > MAX_PATCH_BYTES || data.includes(0)) return null;
  return data.toString('utf8');
}

/**
 * Every checkpoint of `stateDir` matching `filter`, oldest first, each with the paths changed
 * since it (the roots as they are now, read without writing anything).
 */
export function listCheckpoints(
  stateDir: string,
  filter: CheckpointFilter,
  now: () => number,
): CheckpointSummary[] {
  const checkpoints = new Checkpointer(stateDir, now);
  // A run's or a session's records only, through the index by run and session.
  const records = checkpoints.store.records(filter);
  const current = new Map<string, { tree: string; trees: ReadonlyMap<string, Tree> } | null>();
  return records.map((record) => {
    const changed: Change[] = [];
    for (const root of record.roots) {
      if (!current.has(root.path)) {
        let seen: { tree: string; trees: ReadonlyMap<string, Tree> } | null = null;
        try {
          seen = checkpoints.look(root);
        } catch {
          seen = null;
        }
        current.set(root.path, seen);
      }
      const seen = current.get(root.path);
      if (seen == null) continue;
      changed.push(...diffTrees(root.id, root.tree, seen.tree, treeReader(checkpoints, seen.trees)));
    }
    return summary(record, changed);
  });
}

/**
 * Rewinds the roots of checkpoint `id` to it; with `dryRun`, only says what would change. The
 * id is checked before anything is read (it is never a path). Throws `CheckpointFormatError`,
 * `CheckpointNotFoundError`, `CheckpointError` or `RestoreError`; a root that cannot be restored
 * safely stops the rewind there, and the undo checkpoint taken first puts back what was done.
 */
export function rewindTo(
  stateDir: string,
  id: string,
  options: { dryRun: boolean; now: () => number },
): RewindReport {
  const checkpoints = new Checkpointer(stateDir, options.now);
  const record = checkpoints.store.readRecord(id, 'snotra rewind');
  const changes: Change[] = [];
  const patches: { root: string; path: string; diff: string }[] = [];
  let undo: string | null = null;
  const nowTrees = new Map<string, string>();
  let extra: ReadonlyMap<string, Tree> = new Map();
  if (options.dryRun) {
    const all = new Map<string, Tree>();
    for (const root of record.roots) {
      const seen = checkpoints.look(root);
      nowTrees.set(root.path, seen.tree);
      for (const [h, t] of seen.trees) all.set(h, t);
    }
    extra = all;
  } else {
    const taken = checkpoints.take(
      // The undo checkpoint belongs to the run rewound (listed with it), but to no call.
      { runId: record.runId, callId: null, sessionId: record.sessionId, tool: 'rewind' },
      record.roots.map((r) => ({ id: r.id, path: r.path, deny: r.deny })),
    );
    undo = taken.record.id;
    extra = taken.trees;
    for (const r of taken.record.roots) nowTrees.set(r.path, r.tree);
  }
  const treeOf = treeReader(checkpoints, extra);
  for (const root of record.roots) {
    const now = nowTrees.get(root.path);
    if (now === undefined) continue;
    const rootChanges = diffTrees(root.id, root.tree, now, treeOf);
    changes.push(...rootChanges);
    for (const c of rootChanges) {
      if (c.change !== 'modified' || patches.length >= MAX_PATCHES) continue;
      const then = entryAt(treeOf, root.tree, c.path);
      const cur = entryAt(treeOf, now, c.path);
      if (then?.type !== 'file' || cur?.type !== 'file') continue;
      const before = options.dryRun
        ? safeRead(join(root.path, c.path))
        : checkpoints.store.readBlob(cur.hash);
      const a = before === null ? null : text(before);
      const b = text(checkpoints.store.readBlob(then.hash));
      if (a === null || b === null) continue;
      patches.push({ root: root.id, path: c.path, diff: unifiedDiff(c.path, a, b).text });
    }
  }
  const restored: ({ root: string } & RestoreCounts)[] = [];
  if (!options.dryRun) {
    for (const root of record.roots)
      restored.push({
        root: root.id,
        ...restoreRoot(checkpoints.store, root, checkpoints.stateDir, nowTrees.get(root.path) ?? null),
      });
  }
  return { checkpoint: summary(record, changes), dryRun: options.dryRun, changes, patches, undo, restored };
}

function safeRead(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}
