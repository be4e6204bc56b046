/**
 * The one documented rule of what a checkpoint does not hold, listed in every checkpoint:
 * a `node_modules` entry (at any depth), a file over 10 MB, a path one of the root's `deny`
 * globs matches (read as the path guard reads them: `./x`, `/x` and `x` name `x` at the root, `.`
 * the whole root, case ignored; a glob that does not compile excludes everything), the runtime's
 * state dir when it lies inside the root, and entries that are no file, folder or symlink.
 * A rewind leaves excluded paths as they are: it neither restores nor deletes them.
 */
import picomatch from 'picomatch';
import type { ExclusionReason } from './format.ts';

/** The largest file a checkpoint holds (10 MB). */
export const MAX_CHECKPOINT_FILE_BYTES = 10 * 1024 * 1024;

/** What kind of entry a path is, as far as the rule needs to know. */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'special';

/** The exclusion rule of one root. */
export interface ExclusionRule {
  /** Why `relative` (a `/`-separated path inside the root) is excluded, or null when it is held. */
  reason(
    relative: string,
    name: string,
    kind: EntryKind,
    size: number,
    absolute: string,
  ): ExclusionReason | null;
}

/** The rule for a root with `deny` globs, in a runtime whose state dir is `stateDir` (canonical). */
export function exclusionRule(deny: readonly string[], stateDir: string | null): ExclusionRule {
  const denied = denyMatcher(deny);
  return {
    reason(relative, name, kind, size, absolute) {
      if (name === 'node_modules') return 'node_modules';
      if (denied !== null && denied(relative)) return 'denied';
      if (stateDir !== null && absolute === stateDir) return 'state_dir';
      if (kind === 'special') return 'special';
      if (kind === 'file' && size > MAX_CHECKPOINT_FILE_BYTES) return 'over_10mb';
      return null;
    },
  };
}

function denyMatcher(globs: readonly string[]): ((relative: string) => boolean) | null {
  const patterns = globs
    .filter((g) => g.length > 0)
    .map((g) => g.replace(/^(\.?\/)+/, '').replace(/\/+$/, '') || '**')
    .flatMap((g) => [g, `${g}/**`]);
  if (patterns.length === 0) return null;
  try {
    return picomatch(patterns, { dot: true, nocase: true, windows: false });
  } catch {
    return () => true;
  }
}
