/**
 * Root sets as authority. A root set grants, at a canonical path `x`: nothing when no root
 * contains `x` or a deny glob of a containing root matches it; otherwise the access of the
 * deepest containing root (`read` wins a tie) — exactly what the path guard enforces. This file
 * computes the meet (the greatest root set granting no more than both) and the order on that
 * meaning, on canonical paths compared segment-wise.
 *
 * Deny globs of an outer root are rebased onto nested roots (see `globs.ts`), so every root of a
 * result carries, verbatim, the globs that apply at its path; a root that an outer glob denies
 * outright is dropped (everything in it is denied anyway).
 */
import type { AbsolutePath } from '../paths/index.ts';
import { containingRoots, isInside, type CanonicalRoot } from '../paths/index.ts';
import type { RootAccess } from '../risk.ts';
import type { WorkspaceRoot } from '../roots.ts';
import { compareText, normalizeDenyGlobs, rebaseGlob } from './globs.ts';
import { pathKey, type PathSpace } from './space.ts';

/** A root at its canonical path, with its deny globs normalized. */
export type PlacedRoot = CanonicalRoot;

/**
 * The roots that authorize anything, at their canonical paths (root paths canonicalized like the
 * path guard does; a root that cannot be canonicalized is left out), deny globs normalized.
 */
export function placeRoots(space: PathSpace, roots: readonly WorkspaceRoot[]): PlacedRoot[] {
  // A set without exactly one primary root resolves no relative path: none of its roots is primary.
  const resolvesRelative = roots.filter((r) => r.primary).length === 1;
  const out: PlacedRoot[] = [];
  for (const root of roots) {
    const path = space.canonical(root.path, []);
    if (path === null) continue;
    const deny = normalizeDenyGlobs(space.flavor, root.deny ?? []);
    out.push({ root: { ...root, path: path.path, deny, primary: resolvesRelative && root.primary }, path });
  }
  return out;
}

/** What a root set says at one canonical path. */
export interface RootView {
  /** The access of the deepest containing root, or null when no root contains the path. */
  readonly access: RootAccess | null;
  /** A deny glob of a containing root matches the path itself. */
  readonly denied: boolean;
  /** The globs that deny paths below, rebased onto this path (sorted, unique). */
  readonly deny: readonly string[];
}

/** The view of `placed` at `path`. */
export function viewAt(space: PathSpace, placed: readonly PlacedRoot[], path: AbsolutePath): RootView {
  const containing = containingRoots(space.flavor, placed, path);
  let denied = false;
  const deny = new Set<string>();
  for (const r of containing) {
    const relative = path.segments.slice(r.path.segments.length);
    for (const glob of r.root.deny ?? []) {
      const rebased = rebaseGlob(glob, relative);
      if (rebased.hit) denied = true;
      for (const g of rebased.residuals) deny.add(g);
    }
  }
  return { access: containing[0]?.root.access ?? null, denied, deny: [...deny].sort(compareText) };
}

function lesser(a: RootAccess, b: RootAccess): RootAccess {
  return a === 'read' || b === 'read' ? 'read' : 'read-write';
}

function insideAny(space: PathSpace, placed: readonly PlacedRoot[], path: AbsolutePath): boolean {
  return placed.some((r) => isInside(space.flavor, r.path, path));
}

/** Deterministic labels for a root made from the roots at one path: the smallest id wins. */
function labelsAt(at: readonly PlacedRoot[]): Pick<WorkspaceRoot, 'id' | 'source'> {
  const sorted = [...at].sort(
    (a, b) => compareText(a.root.id, b.root.id) || compareText(a.root.source, b.root.source),
  );
  const first = sorted[0];
  return { id: first?.root.id ?? '', source: first?.root.source ?? 'task' };
}

/**
 * The key of the one primary root of a set, or null when it has none or several: relative paths
 * resolve against it, and a set without exactly one resolves none (the path guard's rule).
 */
function primaryKey(space: PathSpace, placed: readonly PlacedRoot[]): string | null {
  const primaries = placed.filter((r) => r.root.primary);
  const only = primaries.length === 1 ? primaries[0] : undefined;
  return only === undefined ? null : pathKey(space.flavor, only.path);
}

/**
 * The meet of two placed root sets: at every canonical path it grants the lesser of what each
 * grants (nothing where either grants nothing). Roots sit at the paths of input roots lying
 * inside a root of each side; each carries every glob (rebased) of every input root containing
 * it; ids are the smallest id at that path. A root is primary only where both sides have their
 * one primary root: the meet resolves a relative path only where each side resolves it, and to
 * the same place (found by the law "⊑ is sound": a side with two roots and no primary one met a
 * side with a primary root). Symmetric in its arguments; sorted by path, then id.
 */
export function meetPlaced(
  space: PathSpace,
  a: readonly PlacedRoot[],
  b: readonly PlacedRoot[],
): PlacedRoot[] {
  const byKey = new Map<string, PlacedRoot[]>();
  for (const r of [...a, ...b]) {
    const key = pathKey(space.flavor, r.path);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [r]);
    else list.push(r);
  }
  const primaryA = primaryKey(space, a);
  const primary = primaryA !== null && primaryA === primaryKey(space, b) ? primaryA : null;
  const out: PlacedRoot[] = [];
  for (const [key, at] of byKey) {
    const path = [...at].map((r) => r.path).sort((x, y) => compareText(x.path, y.path))[0];
    if (path === undefined || !insideAny(space, a, path) || !insideAny(space, b, path)) continue;
    const va = viewAt(space, a, path);
    const vb = viewAt(space, b, path);
    if (va.denied || vb.denied || va.access === null || vb.access === null) continue;
    const deny = [...new Set([...va.deny, ...vb.deny])].sort(compareText);
    const root: WorkspaceRoot = {
      ...labelsAt(at),
      primary: key === primary,
      path: path.path,
      access: lesser(va.access, vb.access),
      ...(deny.length > 0 ? { deny } : {}),
    };
    out.push({ root, path });
  }
  return out.sort((x, y) => compareText(x.root.path, y.root.path) || compareText(x.root.id, y.root.id));
}

/** The meet of two root sets (see `meetPlaced`). */
export function meetRoots(
  space: PathSpace,
  a: readonly WorkspaceRoot[],
  b: readonly WorkspaceRoot[],
): WorkspaceRoot[] {
  return meetPlaced(space, placeRoots(space, a), placeRoots(space, b)).map((r) => r.root);
}

/**
 * The normal form of a root set: the same authority, one root per canonical path (lesser
 * access, merged globs, smallest id), every root carrying the globs that apply at it, roots
 * denied outright dropped, sorted. `normalizeRoots(normalizeRoots(r))` equals `normalizeRoots(r)`.
 */
export function normalizeRoots(space: PathSpace, roots: readonly WorkspaceRoot[]): WorkspaceRoot[] {
  const placed = placeRoots(space, roots);
  return meetPlaced(space, placed, placed).map((r) => r.root);
}

/**
 * Whether root set `a` grants no more than root set `b` at every path. Decided at the critical
 * paths (where either set's deepest root can change: the paths of `a`'s roots and of `b`'s roots
 * inside `a`): wherever `a` grants, `b` must grant at least as much access and every glob `b`
 * applies there must also be applied by `a`. Sound: true implies the order holds for every path.
 * Complete on the results of `meetRoots`/`normalizeRoots`; may say false for two spellings of the
 * same authority with different globs.
 */
export function rootsLeq(
  space: PathSpace,
  a: readonly WorkspaceRoot[],
  b: readonly WorkspaceRoot[],
): boolean {
  const pa = placeRoots(space, a);
  const pb = placeRoots(space, b);
  const critical = [
    ...pa.map((r) => r.path),
    ...pb.map((r) => r.path).filter((p) => insideAny(space, pa, p)),
  ];
  for (const path of critical) {
    const va = viewAt(space, pa, path);
    if (va.access === null || va.denied) continue;
    const vb = viewAt(space, pb, path);
    if (vb.access === null || vb.denied) return false;
    if (va.access === 'read-write' && vb.access === 'read') return false;
    const applied = new Set(va.deny);
    if (vb.deny.some((g) => !applied.has(g))) return false;
  }
  return true;
}
