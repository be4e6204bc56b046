/**
 * How long checkpoints are kept: 30 days, and at most the newest 10,000. Pruning runs when the
 * runtime starts (before any run); when it removed a checkpoint, it then removes every object no
 * remaining checkpoint reaches, except objects younger than an hour (a rewind made from another
 * process at that moment may be writing them).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectStore } from './objects.ts';

/** The retention the runtime applies. */
export const CHECKPOINT_RETENTION = {
  maxAgeMs: 30 * 24 * 60 * 60_000,
  maxCount: 10_000,
  /** Objects younger than this are never swept. */
  sweepGraceMs: 60 * 60_000,
} as const;

/** The time a checkpoint id was made at (its first part, base 36), or null. */
export function checkpointTime(id: string): number | null {
  const part = id.split('-')[1];
  if (part === undefined) return null;
  const at = parseInt(part, 36);
  return Number.isFinite(at) ? at : null;
}

/** What pruning did. */
export interface PruneResult {
  readonly removedCheckpoints: number;
  readonly removedObjects: number;
}

/** Removes checkpoints past the retention at `now`, then the objects only they reached. */
export function pruneCheckpoints(
  store: ObjectStore,
  now: number,
  retention: {
    readonly maxAgeMs: number;
    readonly maxCount: number;
    readonly sweepGraceMs: number;
  } = CHECKPOINT_RETENTION,
): PruneResult {
  const ids = store.recordIds();
  const keepFrom = Math.max(0, ids.length - retention.maxCount);
  const doomed = ids.filter(
    (id, i) => i < keepFrom || (checkpointTime(id) ?? now) < now - retention.maxAgeMs,
  );
  if (doomed.length === 0) return { removedCheckpoints: 0, removedObjects: 0 };
  for (const id of doomed) store.removeRecord(id);
  const keep = new Set<string>();
  const mark = (tree: string): void => {
    if (keep.has(tree)) return;
    keep.add(tree);
    for (const e of store.readTree(tree).entries) {
      if (e.type === 'file') keep.add(e.hash);
      else if (e.type === 'dir') mark(e.hash);
    }
  };
  for (const id of store.recordIds()) for (const root of store.readRecord(id).roots) mark(root.tree);
  const removedObjects = store.sweep(keep, (hash) => {
    try {
      return (
        statSync(join(store.dir, 'objects', hash.slice(0, 2), hash.slice(2))).mtimeMs >
        now - retention.sweepGraceMs
      );
    } catch {
      return true;
    }
  });
  return { removedCheckpoints: doomed.length, removedObjects };
}
