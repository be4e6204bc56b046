/** `list_dir {path}`: the entries of a directory, capped. */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { recheckAtExecution } from '../../../policy/paths/index.ts';
import { ToolErrorCode } from '../codes.ts';
import { decidedTarget, executionGuard, refusalError, throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { pinDirectory } from './pinned-dir.ts';

/** Limits of `list_dir`. */
export interface ListDirOptions {
  /** Entries returned at most (default 1000); more sets `truncated`. */
  readonly maxEntries?: number;
}

/** One entry of a listing. Symlinks are reported as such, never followed. */
export interface DirEntry {
  readonly name: string;
  readonly kind: 'file' | 'directory' | 'symlink' | 'other';
  /** Size in bytes for regular files. */
  readonly size?: number;
}

/** The result of `list_dir`. */
export interface ListDirResult {
  readonly path: string;
  readonly entries: readonly DirEntry[];
  /** Entries in the directory (all of them, also those not returned). */
  readonly total: number;
  readonly truncated: boolean;
  /** Entries withheld because the policy refuses them (a root's deny glob, a sensitive path). */
  readonly hidden: number;
}

function kindOf(entry: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): DirEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'directory';
  if (entry.isFile()) return 'file';
  return 'other';
}

/**
 * Creates the `list_dir` executor. Guarantees: the directory is re-checked at execution and
 * pinned (read through its verified descriptor), so a swap after the decision cannot list
 * another directory; entries the policy refuses (a root's deny glob, a sensitive path) are
 * withheld and only counted, so a listing never names what reading would deny; entries are
 * sorted by name; at most `maxEntries` are returned.
 */
export function createListDirExecutor(options: ListDirOptions = {}): ToolExecutor {
  const maxEntries = options.maxEntries ?? 1000;
  return {
    async execute(_args, ctx: ToolExecutionContext): Promise<ListDirResult> {
      throwIfCancelled(ctx.signal);
      const guard = executionGuard(ctx);
      const target = decidedTarget(ctx, 'path');
      const checked = recheckAtExecution(target, 'read', ctx.roots, guard);
      if (!checked.ok) throw refusalError(checked);
      const dir = pinDirectory(checked.path);
      if (dir === null) throw new ToolError(ToolErrorCode.notADirectory, 'the path is not a directory');
      try {
        const again = recheckAtExecution(target, 'read', ctx.roots, guard);
        if (!again.ok) throw refusalError(again);
        const listed = await fs.readdir(dir.via, { withFileTypes: true });
        const all = listed.filter((entry) => {
          const r = guard.resolve('path', join(checked.path, entry.name), 'read', ctx.roots);
          return r.ok || (r.reason !== 'path_denied' && r.reason !== 'sensitive_path');
        });
        const hidden = listed.length - all.length;
        all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const entries: DirEntry[] = [];
        for (const entry of all.slice(0, maxEntries)) {
          const kind = kindOf(entry);
          if (kind !== 'file') {
            entries.push({ name: entry.name, kind });
            continue;
          }
          const stats = await fs.lstat(dir.entry(entry.name)).catch(() => null);
          entries.push(
            stats === null ? { name: entry.name, kind } : { name: entry.name, kind, size: stats.size },
          );
        }
        return { path: checked.path, entries, total: all.length, truncated: all.length > maxEntries, hidden };
      } finally {
        dir.close();
      }
    },
  };
}
