/**
 * `path` rules: a glob relative to the workspace root that holds a resolved target, with the
 * convention of a root's `deny` globs (`migrations`, `./migrations` and `/migrations` all mean
 * `migrations` at the root, and cover everything beneath it; dotfiles match; case is ignored).
 * Targets are the canonical paths of step 3, so a symlink or `..` spelling matches where it
 * really points.
 */
import picomatch from 'picomatch';
import { assertPicomatchTerminates } from './paths/picomatch-guard.ts';
import type { Target } from './decision.ts';
import type { Match } from './rule-command.ts';

/** What a path rule looks at in one call. */
export interface PathFacts {
  /** The call's targets; only those with a resolved path are matched. */
  readonly targets: readonly Target[];
  /** Whether the call writes `target` (else it reads it). */
  isWrite(target: Target): boolean;
  /** Every spelling of every root's path (as configured and canonical), by root id. */
  rootPaths(): ReadonlyMap<string, readonly string[]>;
}

const OPTIONS: picomatch.PicomatchOptions = { dot: true, nocase: true, windows: false };
const MAX_CACHED = 256;
const matchers = new Map<string, (relative: string) => boolean>();

function matcherOf(glob: string): (relative: string) => boolean {
  const cached = matchers.get(glob);
  if (cached !== undefined) return cached;
  const g =
    glob
      .replace(/\\/g, '/')
      .replace(/^(\.?\/)+/, '')
      .replace(/\/+$/, '') || '**';
  let m: (relative: string) => boolean;
  try {
    assertPicomatchTerminates(g);
    m = picomatch([g, `${g}/**`], OPTIONS);
  } catch {
    m = () => true; // a glob that cannot be compiled matches everything: fail closed
  }
  if (matchers.size >= MAX_CACHED) matchers.clear();
  matchers.set(glob, m);
  return m;
}

function slashed(path: string): string {
  return path.replace(/\\/g, '/').replace(/\/+$/, '').toLowerCase();
}

/** `path` relative to `root` (both absolute), or null when it is not beneath it; case ignored. */
export function relativeTo(root: string, path: string): string | null {
  const r = slashed(root);
  const p = path.replace(/\\/g, '/');
  if (p.toLowerCase() === r || p.toLowerCase() === `${r}/`) return '';
  if (!p.toLowerCase().startsWith(`${r}/`)) return null;
  return p.slice(r.length + 1).replace(/\/+$/, '');
}

/** Whether any resolved target of the call (of the given access) lies under `glob` in a root. */
export function matchPath(glob: string, access: 'read' | 'write' | undefined, facts: PathFacts): Match {
  const matches = matcherOf(glob);
  const resolved = facts.targets.filter(
    (t) => t.resolved !== null && (access === undefined || (access === 'write') === facts.isWrite(t)),
  );
  if (resolved.length === 0) return 'no';
  const roots = facts.rootPaths();
  for (const t of resolved) {
    for (const spellings of roots.values()) {
      for (const root of spellings) {
        const relative = relativeTo(root, t.resolved as string);
        if (relative !== null && relative !== '' && matches(relative)) return 'yes';
      }
    }
  }
  return 'no';
}
