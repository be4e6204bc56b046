/**
 * Workspace roots after canonicalization, containment by path segments, and `deny` globs.
 */
import picomatch from 'picomatch';
import { assertPicomatchTerminates } from './picomatch-guard.ts';
import type { WorkspaceRoot } from '../roots.ts';
import type { AbsolutePath } from './canonicalize.ts';
import type { PathFlavor } from './flavor.ts';
import { GLOB_OPTIONS, withCaseVariants } from './sensitive.ts';

/** A root whose path was canonicalized like any input (a root given through a symlink works). */
export interface CanonicalRoot {
  readonly root: WorkspaceRoot;
  readonly path: AbsolutePath;
}

/**
 * True when `path` is `root` or lies beneath it, comparing whole segments (so `/w/proj-evil` is
 * not inside `/w/proj`, and `/w/proj/..cache` is), folded by the flavor's case rule.
 */
export function isInside(flavor: PathFlavor, root: AbsolutePath, path: AbsolutePath): boolean {
  if (flavor.fold(root.anchor) !== flavor.fold(path.anchor)) return false;
  if (root.segments.length > path.segments.length) return false;
  for (let i = 0; i < root.segments.length; i++) {
    if (flavor.fold(root.segments[i] ?? '') !== flavor.fold(path.segments[i] ?? '')) return false;
  }
  return true;
}

/**
 * The roots containing `path`, most specific (deepest) first; among equally deep roots, `read`
 * before `read-write` (the stricter one decides), then in the given order.
 */
export function containingRoots(
  flavor: PathFlavor,
  roots: readonly CanonicalRoot[],
  path: AbsolutePath,
): CanonicalRoot[] {
  const inside = roots.filter((r) => isInside(flavor, r.path, path));
  const rank = (r: CanonicalRoot): number => r.path.segments.length * 2 + (r.root.access === 'read' ? 1 : 0);
  return inside
    .map((r, index) => ({ r, index }))
    .sort((a, b) => rank(b.r) - rank(a.r) || a.index - b.index)
    .map(({ r }) => r);
}

const MAX_CACHED_MATCHERS = 256;
const denyMatchers = new Map<string, (key: string) => boolean>();

/** A deny glob in matcher form: `./x`, `/x` and `x` all mean `x` at the root; `\\` separates on Windows. */
function normalizeDenyGlob(flavor: PathFlavor, glob: string): string {
  const slashed = flavor.name === 'windows' ? glob.replace(/\\/g, '/') : glob;
  return slashed
    .normalize('NFC')
    .replace(/^(\.?\/)+/, '')
    .replace(/\/+$/, '');
}

function denyMatcher(flavor: PathFlavor, globs: readonly string[]): (key: string) => boolean {
  const cacheKey = `${flavor.name}:${JSON.stringify(globs)}`;
  const cached = denyMatchers.get(cacheKey);
  if (cached !== undefined) return cached;
  let matcher: (key: string) => boolean;
  try {
    const patterns = globs
      .filter((g) => g.length > 0)
      // `.`, `/` and `./` name the root itself: everything in it is denied.
      .map((g) => normalizeDenyGlob(flavor, g) || '**')
      .flatMap((g) => [g, `${g}/**`]);
    for (const g of patterns) assertPicomatchTerminates(g);
    matcher = picomatch(patterns, GLOB_OPTIONS);
  } catch {
    // A deny glob that cannot be compiled denies everything in its root: fail closed.
    matcher = () => true;
  }
  if (denyMatchers.size >= MAX_CACHED_MATCHERS) denyMatchers.clear();
  denyMatchers.set(cacheKey, matcher);
  return matcher;
}

/**
 * The first containing root whose `deny` globs match `path` or one of its parents, relative to
 * that root (`/`-separated, a leading `/` or `./` anchors at the root, dotfiles matched, case
 * ignored); null when none does. Every
 * containing root's globs apply, so a deny in an outer root also covers a nested root.
 */
export function deniedBy(
  flavor: PathFlavor,
  containing: readonly CanonicalRoot[],
  path: AbsolutePath,
): CanonicalRoot | null {
  for (const r of containing) {
    const globs = r.root.deny ?? [];
    if (globs.length === 0) continue;
    const relative = path.segments.slice(r.path.segments.length).join('/');
    if (relative.length === 0) continue;
    const matches = denyMatcher(flavor, globs);
    if (withCaseVariants([relative]).some(matches)) return r;
  }
  return null;
}
