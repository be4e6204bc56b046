/**
 * An in-memory `PathFs`, so the Windows flavor (and any flavor not native to the host) can be
 * exercised without its file system. It answers exactly what `lstat`/`readlink` would for the
 * entries it holds; it does not follow symlinks itself (the canonicalizer does that).
 */
import type { PathFlavor } from './flavor.ts';
import type { EntryKind, PathFs } from './fs.ts';

/** One entry of a memory file system; parents are implied directories. */
export type MemoryEntry =
  | { readonly path: string; readonly kind: 'file' | 'directory' | 'other' }
  | { readonly path: string; readonly kind: 'symlink'; readonly target: string };

/** A memory file system that can change between calls (to model swaps). */
export interface MemoryFs extends PathFs {
  /** Adds or replaces an entry (and its implied parent directories). */
  set(entry: MemoryEntry): void;
  /** Removes the entry at `path` and everything beneath it. */
  remove(path: string): void;
}

/**
 * Creates a memory file system for `flavor`. Guarantees: paths compare by the flavor's folding
 * (case-insensitive for Windows); an absolute path it does not hold is `missing`; a path that is
 * not an absolute path of the flavor is `error`; nothing throws.
 */
export function createMemoryFs(flavor: PathFlavor, entries: readonly MemoryEntry[] = []): MemoryFs {
  const table = new Map<string, MemoryEntry>();

  function split(path: string): { anchor: string; segments: readonly string[] } | null {
    const parsed = flavor.parse(path, { expandHome: false });
    return parsed.kind === 'absolute' ? { anchor: parsed.anchor, segments: parsed.segments } : null;
  }
  function keyOf(anchor: string, segments: readonly string[]): string {
    return flavor.fold(flavor.format(anchor, segments));
  }

  const fs: MemoryFs = {
    kind(path): EntryKind {
      const parts = split(path);
      if (parts === null) return 'error';
      if (parts.segments.length === 0) return 'directory';
      return table.get(keyOf(parts.anchor, parts.segments))?.kind ?? 'missing';
    },
    readlink(path) {
      const parts = split(path);
      if (parts === null) return null;
      const entry = table.get(keyOf(parts.anchor, parts.segments));
      return entry?.kind === 'symlink' ? entry.target : null;
    },
    set(entry) {
      const parts = split(entry.path);
      if (parts === null) return;
      for (let i = 1; i < parts.segments.length; i++) {
        const parent = parts.segments.slice(0, i);
        const key = keyOf(parts.anchor, parent);
        if (!table.has(key)) table.set(key, { path: flavor.format(parts.anchor, parent), kind: 'directory' });
      }
      table.set(keyOf(parts.anchor, parts.segments), entry);
    },
    remove(path) {
      const parts = split(path);
      if (parts === null) return;
      const key = keyOf(parts.anchor, parts.segments);
      const separator = flavor.name === 'windows' ? '\\' : '/';
      for (const existing of [...table.keys()]) {
        if (existing === key || existing.startsWith(key.endsWith(separator) ? key : key + separator)) {
          table.delete(existing);
        }
      }
    },
  };
  for (const entry of entries) fs.set(entry);
  return fs;
}
