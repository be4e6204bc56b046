/**
 * Deny globs moved from one root to a root nested inside it. A glob `g` of a root at `/p`
 * denies `/p/s1/…/sm` when it matches a non-empty prefix `s1/…/sj` (the path guard compiles
 * `g` and `g/**`). For a nested root `/p/q1/…/qk` we compute, segment by segment, the set of
 * residual globs (suffixes of `g`) that deny exactly the same paths relative to the nested root,
 * and whether `g` already denies the nested root itself ("hit"). Residuals are glob strings the
 * path guard matches unchanged, so a child's deny list can be read on its own. A glob whose
 * segments cannot be split safely (negation, `/` inside braces, classes or extglobs, escapes,
 * empty/`.`/`..` segments) is treated as denying every nested root: refusing more, never less.
 */
import picomatch from 'picomatch';
import { assertPicomatchTerminates } from '../paths/picomatch-guard.ts';
import type { PathFlavor } from '../paths/index.ts';
import { GLOB_OPTIONS, withCaseVariants } from '../paths/sensitive.ts';

/**
 * A deny glob in the form the path guard matches, character for character (`./x`, `/x` and `x`
 * all mean `x` at the root; `/` and `./` mean everything; Windows `\` separates); null for the
 * empty glob, which the guard ignores.
 */
export function normalizeDenyGlob(flavor: PathFlavor, glob: string): string | null {
  if (glob.length === 0) return null;
  const slashed = flavor.name === 'windows' ? glob.replace(/\\/g, '/') : glob;
  return slashed.replace(/^(\.?\/)+/, '').replace(/\/+$/, '') || '**';
}

/** The normalized, sorted, de-duplicated form of a deny list. */
export function normalizeDenyGlobs(flavor: PathFlavor, globs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const g of globs) {
    const n = normalizeDenyGlob(flavor, g);
    if (n !== null) out.add(n);
  }
  return [...out].sort(compareText);
}

/** Code-unit order (locale-independent), for normal forms. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const BRACKETS: readonly (readonly [string, string])[] = [
  ['{', '}'],
  ['(', ')'],
  ['[', ']'],
];

function balanced(segment: string): boolean {
  return BRACKETS.every(([open, close]) => segment.split(open).length === segment.split(close).length);
}

/** The glob's segments, or null when splitting at `/` might not follow picomatch's reading. */
function segmentsOf(glob: string): string[] | null {
  if (glob.startsWith('!') || glob.includes('\\')) return null;
  const segments = glob.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..' || !balanced(s)) return null;
  }
  return segments;
}

const MAX_CACHED = 512;
const segmentMatchers = new Map<string, (name: string) => boolean>();

function segmentMatches(pattern: string, name: string): boolean {
  let matcher = segmentMatchers.get(pattern);
  if (matcher === undefined) {
    try {
      assertPicomatchTerminates(pattern);
      matcher = picomatch(pattern, GLOB_OPTIONS);
    } catch {
      // A pattern that does not compile: the guard denies everything for it, so do we.
      matcher = () => true;
    }
    if (segmentMatchers.size >= MAX_CACHED) segmentMatchers.clear();
    segmentMatchers.set(pattern, matcher);
  }
  const m = matcher;
  return withCaseVariants([name]).some((n) => m(n));
}

/** What one glob of an outer root means for a root nested `relative` below it. */
export interface Rebased {
  /** The glob denies the nested root itself (and so everything in it). */
  readonly hit: boolean;
  /** Globs relative to the nested root that deny what the glob denies below it (empty on a hit). */
  readonly residuals: readonly string[];
}

function closure(segments: readonly string[], states: Iterable<number>): Set<number> {
  const out = new Set<number>();
  for (let j of states) {
    out.add(j);
    while (segments[j] === '**') out.add(++j);
  }
  return out;
}

/**
 * Rebases a normalized deny glob from a root to a root `relative` (segments) below it.
 * Guarantees: for every path `x` below the nested root, the outer root's guard denies `x` by
 * this glob only if `hit` is true or some residual denies `x` relative to the nested root.
 * Composes: rebasing by `p` then by `q` gives the same residual set as rebasing by `p/q`.
 */
export function rebaseGlob(glob: string, relative: readonly string[]): Rebased {
  if (relative.length === 0) return { hit: false, residuals: [glob] };
  const segments = segmentsOf(glob);
  if (segments === null) return { hit: true, residuals: [] };
  const end = segments.length;
  let states = closure(segments, [0]);
  let hit = false;
  for (const name of relative) {
    const next: number[] = [];
    for (const j of states) {
      const pattern = segments[j];
      if (pattern === undefined) continue;
      if (pattern === '**') next.push(j);
      else if (segmentMatches(pattern, name)) next.push(j + 1);
    }
    states = closure(segments, next);
    if (states.has(end)) hit = true;
    if (states.size === 0) break;
  }
  if (hit) return { hit, residuals: [] };
  const residuals = [...states]
    .filter((j) => j < end)
    .map((j) => segments.slice(j).join('/'))
    .sort(compareText);
  return { hit, residuals };
}
