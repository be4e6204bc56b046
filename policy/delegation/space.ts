/**
 * How the delegation code reads root paths: a flavor for comparisons and a canonicalizer, so
 * "child root inside parent root" uses the very rules of the path guard (segments, case folding,
 * symlinks), never string prefixes.
 */
import type { AbsolutePath, Canonicalization, PathFlavor } from '../paths/index.ts';
import { lexicalNormalize, parseAbsolute, posixFlavor, windowsFlavor } from '../paths/index.ts';
import type { WorkspaceRoot } from '../roots.ts';

/** Path operations the envelope algebra needs. */
export interface PathSpace {
  readonly flavor: PathFlavor;
  /**
   * The canonical absolute form of `input`, relative inputs resolved against the primary root of
   * `roots`; null when it cannot be canonicalized (such a root authorizes nothing).
   */
  canonical(input: string, roots: readonly WorkspaceRoot[]): AbsolutePath | null;
}

/** The canonicalizing part of a `SnotraPathGuard` (`createPathGuard`). */
export interface Canonicalizer {
  readonly flavor: PathFlavor;
  canonicalize(input: string, roots: readonly WorkspaceRoot[]): Canonicalization;
}

/** A path space over a real path guard: symlinks, `~` and missing leaves as the guard sees them. */
export function guardPathSpace(guard: Canonicalizer): PathSpace {
  return {
    flavor: guard.flavor,
    canonical(input, roots) {
      const c = guard.canonicalize(input, roots);
      return c.ok ? c.canonical : null;
    },
  };
}

/**
 * A path space that only reads text (`.` and `..` applied lexically, no file system): for
 * envelopes whose root paths are already canonical. `~` inputs are refused (null).
 */
export function lexicalPathSpace(
  flavor: PathFlavor = process.platform === 'win32' ? windowsFlavor : posixFlavor,
): PathSpace {
  return {
    flavor,
    canonical(input, roots) {
      const absolute = parseAbsolute(flavor, input);
      if (absolute !== null) return absolute;
      const parsed = flavor.parse(input, { expandHome: false });
      const primaries = roots.filter((r) => r.primary);
      const primary = primaries.length === 1 ? primaries[0] : undefined;
      if (parsed.kind !== 'relative' || primary === undefined) return null;
      const base = parseAbsolute(flavor, primary.path);
      return base === null
        ? null
        : lexicalNormalize(flavor, base.anchor, [...base.segments, ...parsed.segments]);
    },
  };
}

/** A comparison key of a canonical path: equal exactly when the flavor treats the paths as equal. */
export function pathKey(flavor: PathFlavor, path: AbsolutePath): string {
  return JSON.stringify([flavor.fold(path.anchor), ...path.segments.map((s) => flavor.fold(s))]);
}
