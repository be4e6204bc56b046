/**
 * Finding, on the host, the paths a sandbox must protect: the policy's sensitive and
 * never-writable globs (the same data the path guard decides with) turned into the existing
 * paths they name. Anchored globs (`/root/.ssh`, `/home/*\/.aws`, the state dir) are expanded
 * segment by segment from `/`; globs that match anywhere (`**\/.git/hooks`) are looked for by a
 * bounded walk of the roots.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { SandboxError, type HiddenKind } from './plan.ts';

/** The globs of the policy's path rules, as the path guard compiled them (each ends in `/**`). */
export interface HostRules {
  readonly sensitive: readonly string[];
  readonly neverWritable: readonly string[];
}

/** Limits of the walk of the roots. */
export interface WalkLimits {
  /** Directories read per plan, over all roots (default 20 000). */
  readonly maxDirectories: number;
  /** Depth below a root (default 12). */
  readonly maxDepth: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxDirectories: 20_000, maxDepth: 12 };

const OPTIONS: picomatch.PicomatchOptions = { dot: true, nocase: true };
const SPECIAL = /(?<!\\)[*?[\]{}()!+@]/;

/** The glob without its "and everything beneath" suffix. */
function pathGlob(glob: string): string {
  return glob.endsWith('/**') ? glob.slice(0, -3) || '/' : glob;
}

/** Replaced wholesale inside every sandbox (its own `/proc`, a minimal `/dev`): never expanded. */
const KERNEL_VIEWS = new Set(['proc', 'dev']);

/** Segments of an anchored glob (`/a/*\/b`), or null when it is not anchored at `/`. */
function anchoredSegments(glob: string): string[] | null {
  if (!glob.startsWith('/')) return null;
  const segments = glob.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s.includes('**'))) return null;
  return KERNEL_VIEWS.has(unescape(segments[0] ?? '').toLowerCase()) ? [] : segments;
}

const unescape = (segment: string): string => segment.replace(/\\(.)/g, '$1');

async function kindOf(path: string): Promise<HiddenKind | null> {
  try {
    return (await stat(path)).isDirectory() ? 'dir' : 'file';
  } catch {
    return null;
  }
}

/** `readdir` memoized for one plan (the same home and system folders are read by many globs). */
type DirReader = (dir: string) => Promise<readonly string[]>;

function cachedReaddir(): DirReader {
  const cache = new Map<string, Promise<readonly string[]>>();
  return (dir) => {
    let names = cache.get(dir);
    if (names === undefined) {
      names = readdir(dir).catch(() => []);
      cache.set(dir, names);
    }
    return names;
  };
}

/**
 * Existing paths an anchored glob names. Names are compared case-insensitively (as the policy
 * does), so `~/.SSH` on a case-sensitive file system is found by the `~/.ssh` rule.
 */
async function expandAnchored(segments: readonly string[], list: DirReader): Promise<string[]> {
  let current = ['/'];
  for (const segment of segments) {
    const match = SPECIAL.test(segment)
      ? picomatch(segment, OPTIONS)
      : (
          (literal: string) => (name: string) =>
            name.toLowerCase() === literal
        )(unescape(segment).toLowerCase());
    const literal = SPECIAL.test(segment) ? null : unescape(segment);
    const next: string[] = [];
    for (const dir of current) {
      const prefix = dir === '/' ? '' : dir;
      const found = new Set<string>();
      for (const name of await list(dir)) if (match(name)) found.add(name);
      // A folder that can be searched but not listed still holds its literal entry.
      if (literal !== null && !found.has(literal) && (await kindOf(`${prefix}/${literal}`)) !== null) {
        found.add(literal);
      }
      for (const name of found) next.push(`${prefix}/${name}`);
    }
    current = next;
    if (current.length === 0) break;
  }
  return current;
}

/** A path found on the host, with the kind of what it is (after symlinks). */
export interface FoundPath {
  readonly path: string;
  readonly kind: HiddenKind;
}

/** Canonical forms of `paths` (symlinks resolved), deduplicated; vanished ones dropped. */
async function canonical(paths: readonly string[]): Promise<FoundPath[]> {
  const resolved = await Promise.all(
    [...new Set(paths)].map(async (path) => {
      try {
        const real = await realpath(path);
        const kind = await kindOf(real);
        return kind === null ? null : { path: real, kind };
      } catch {
        // A dangling link names nothing that can be read.
        return null;
      }
    }),
  );
  const out = new Map<string, HiddenKind>();
  for (const r of resolved) if (r !== null) out.set(r.path, r.kind);
  return [...out].map(([path, kind]) => ({ path, kind }));
}

/** What a walk of the roots found, and whether it stopped at a limit. */
interface WalkResult {
  readonly sensitive: readonly string[];
  readonly neverWritable: readonly string[];
  readonly complete: boolean;
}

/** Whether the walk enters `name` in `dir`: not package trees, not git's object store. */
function entered(dir: string, name: string): boolean {
  if (name === 'node_modules') return false;
  return !(name === 'objects' && dir.endsWith('/.git'));
}

/** Rules compiled once per rule set (matchers and anchored segments), reused by every plan. */
interface CompiledRules {
  readonly anchored: readonly (readonly string[])[];
  readonly isSensitive: (path: string) => boolean;
  readonly isNever: (path: string) => boolean;
}

const compiledCache = new WeakMap<HostRules, CompiledRules>();

function compile(rules: HostRules): CompiledRules {
  const cached = compiledCache.get(rules);
  if (cached !== undefined) return cached;
  const sensitiveGlobs = [...new Set(rules.sensitive.map(pathGlob))];
  const neverGlobs = [...new Set(rules.neverWritable.map(pathGlob))];
  const anchored = new Map<string, string[]>();
  for (const glob of sensitiveGlobs) {
    const segments = anchoredSegments(glob);
    if (segments !== null && segments.length > 0) anchored.set(segments.join('/'), segments);
  }
  const compiled: CompiledRules = {
    anchored: [...anchored.values()],
    isSensitive: matcher(sensitiveGlobs),
    isNever: matcher(neverGlobs),
  };
  compiledCache.set(rules, compiled);
  return compiled;
}

/**
 * One matcher for `globs`. Most globs end in a literal name (`.ssh`, `hooks`, `.mcp.json`): an
 * entry whose name is none of those (case-folded) is tested only against the globs that end in a
 * pattern, which keeps the walk's cost per entry small.
 */
function matcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const byName = new Map<string, string[]>();
  const others: string[] = [];
  for (const glob of globs) {
    const last = glob.slice(glob.lastIndexOf('/') + 1);
    if (last.length === 0 || SPECIAL.test(last)) others.push(glob);
    else {
      const name = unescape(last).toLowerCase();
      byName.set(name, [...(byName.get(name) ?? []), glob]);
    }
  }
  let named: Map<string, (path: string) => boolean>;
  let rest: (path: string) => boolean;
  try {
    named = new Map([...byName].map(([name, list]) => [name, picomatch(list, OPTIONS)]));
    rest = others.length > 0 ? picomatch(others, OPTIONS) : () => false;
  } catch (error) {
    // Fail closed: no command runs with a protection rule that cannot be read.
    throw new SandboxError(`a protected-path pattern cannot be compiled: ${(error as Error).message}`);
  }
  return (path) => {
    const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
    return named.get(name)?.(path) === true || rest(path);
  };
}

/** A root to search: whether it is writable, and its `deny` globs (relative to it). */
export interface WalkedRoot {
  readonly path: string;
  readonly writable: boolean;
  readonly deny?: readonly string[];
}

/**
 * A root's `deny` globs as the path guard reads them (`./x`, `/x` and `x` name `x` at the root;
 * `.` the whole root; case ignored); an uncompilable glob hides everything (fail closed).
 */
function denyMatcher(globs: readonly string[] | undefined): ((relative: string) => boolean) | null {
  const patterns = (globs ?? [])
    .filter((g) => g.length > 0)
    .map((g) => g.replace(/^(\.?\/)+/, '').replace(/\/+$/, '') || '**');
  if (patterns.length === 0) return null;
  try {
    return picomatch(patterns, OPTIONS);
  } catch {
    return () => true;
  }
}

/** Folders the walk reads between two turns of the event loop. */
const WALK_SLICE = 128;

/**
 * Walks `roots` once, level by level (not following symlinks, not entering package trees or
 * `.git/objects`): entries whose absolute path matches a sensitive glob (not entered further),
 * and entries inside a writable root that match a never-writable glob.
 */
async function walkRoots(
  roots: readonly WalkedRoot[],
  rules: CompiledRules,
  limits: WalkLimits,
): Promise<WalkResult> {
  const sensitive: string[] = [];
  const neverWritable: string[] = [];
  let budget = limits.maxDirectories;
  let complete = true;
  const seen = new Set<string>();
  let level = roots.map((r) => ({
    dir: r.path,
    writable: r.writable,
    base: r.path,
    denied: denyMatcher(r.deny),
  }));
  for (let depth = 0; level.length > 0; depth++) {
    const next: typeof level = [];
    const pending = level.filter((item) => {
      const key = `${item.writable}:${item.dir}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (pending.length > budget) {
      pending.length = Math.max(0, budget);
      complete = false;
    }
    budget -= pending.length;
    for (let i = 0; i < pending.length; i += WALK_SLICE) {
      // Synchronous reads are several times faster than queued async ones; slices keep each
      // block of the event loop short.
      if (i > 0 || depth > 0) await new Promise((r) => setImmediate(r));
      for (const { dir, writable, base, denied } of pending.slice(i, i + WALK_SLICE)) {
        let entries: Dirent[];
        try {
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const entry of entries) {
          const path = dir === '/' ? `/${entry.name}` : `${dir}/${entry.name}`;
          if (rules.isSensitive(path) || (denied !== null && denied(path.slice(base.length + 1)))) {
            sensitive.push(path);
            continue;
          }
          if (writable && rules.isNever(path)) neverWritable.push(path);
          if (!entry.isDirectory() || !entered(dir, entry.name)) continue;
          if (depth + 1 > limits.maxDepth) {
            complete = false;
            continue;
          }
          next.push({ dir: path, writable, base, denied });
        }
      }
    }
    if (!complete && budget <= 0) break;
    level = next;
  }
  return { sensitive, neverWritable, complete };
}

/** The protected paths of one plan. */
export interface HostFindings {
  readonly sensitive: readonly FoundPath[];
  readonly neverWritable: readonly string[];
  /** False when the walk of the roots stopped at a limit (deeper matches were not looked for). */
  readonly complete: boolean;
}

/**
 * Finds the existing paths `rules` name: every sensitive path on the host (anchored globs) and
 * inside `roots` (any glob, and what a root's `deny` globs match), and every never-writable path
 * inside the writable roots. Returned
 * in canonical form. Never throws for a missing or unreadable path (it is skipped).
 */
export async function findProtectedPaths(
  rules: HostRules,
  roots: readonly WalkedRoot[],
  limits: WalkLimits = DEFAULT_WALK_LIMITS,
): Promise<HostFindings> {
  const compiled = compile(rules);
  const list = cachedReaddir();
  const [expanded, walked] = await Promise.all([
    Promise.all(compiled.anchored.map((segments) => expandAnchored(segments, list))),
    walkRoots(roots, compiled, limits),
  ]);
  const anchored = expanded.flat();
  const sensitive = await canonical([...anchored, ...walked.sensitive]);
  const neverWritable = (await canonical(walked.neverWritable)).map((f) => f.path);
  return { sensitive, neverWritable, complete: walked.complete };
}

/** The host rules of a path guard: every glob its sensitive and never-writable rules compiled to. */
export function hostRulesOf(guard: {
  readonly rules: {
    readonly sensitive: ReadonlyMap<string, readonly string[]>;
    readonly neverWritable: ReadonlyMap<string, readonly string[]>;
  };
}): HostRules {
  return {
    sensitive: [...guard.rules.sensitive.values()].flat(),
    neverWritable: [...guard.rules.neverWritable.values()].flat(),
  };
}
