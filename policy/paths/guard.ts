/**
 * The path guard: steps 2 (sensitive and never-writable paths) and 3 (canonical paths and root
 * enforcement) of the evaluation pipeline for every declared path argument.
 */
import * as os from 'node:os';
import type { ReasonCode, Target } from '../decision.ts';
import type { PathAccess } from '../risk.ts';
import type { WorkspaceRoot } from '../roots.ts';
import type { Denial, LinkWalk, PathGuard } from '../seams.ts';
import {
  absolutePath,
  canonicalize,
  DEFAULT_MAX_SYMLINKS,
  parseAbsolute,
  type AbsolutePath,
  type Canonicalization,
  type CanonicalizeContext,
} from './canonicalize.ts';
import type { PathFlavor } from './flavor.ts';
import { posixFlavor } from './flavor.ts';
import type { PathFs } from './fs.ts';
import { nodeFs } from './node-fs.ts';
import { containingRoots, deniedBy, type CanonicalRoot } from './root-match.ts';
import type { PathRuleId } from './rules.ts';
import {
  NEVER_WRITABLE_PATHS,
  RUNTIME_RULE_IDS,
  SENSITIVE_PATHS,
  type PathRule,
} from './sensitive-defaults.ts';
import { globsOverlap, hasGlob, unescapeGlob } from './pattern-overlap.ts';
import { compileRules, escapeGlob, type RuleMatcher } from './sensitive.ts';
import { windowsFlavor } from './windows-flavor.ts';

/** Construction options of `createPathGuard`. */
export interface PathGuardOptions {
  /** The runtime's state dir (absolute): sensitive, never readable or writable by tools. */
  readonly stateDir: string;
  /** The runtime's config file (absolute): sensitive, never readable or writable by tools. */
  readonly configFile: string;
  /** The user's home for `~` and `~/…` rules (absolute); defaults to `os.homedir()`. */
  readonly home?: string;
  /** Path flavor; defaults to the host's (`windows` on win32, else `posix`). */
  readonly flavor?: PathFlavor;
  /** File system view; defaults to the real one (`nodeFs`). */
  readonly fs?: PathFs;
  /** Extra sensitive-path rules from config; added after the defaults, never replacing them. */
  readonly extraSensitive?: readonly PathRule[];
  /** Extra never-writable rules from config; added after the defaults. */
  readonly extraNeverWritable?: readonly PathRule[];
  /** Symlinks followed per path before giving up with `invalid_path`; defaults to 40. */
  readonly maxSymlinks?: number;
}

/** A hard denial from the path guard, with a human-readable message (no secrets in it). */
export type PathDenial = Denial & { readonly message: string };

/**
 * Outcome of `resolve`: a `Target` and the canonical path, or a denial. Assignable to the
 * `PathResolution` of `seams.ts`.
 */
export type PathCheck =
  | { readonly ok: true; readonly target: Target; readonly canonical: AbsolutePath }
  | ({ readonly ok: false; readonly message: string } & Denial);

/** The path guard with the extras tool executors and diagnostics use. */
export interface SnotraPathGuard extends PathGuard {
  readonly flavor: PathFlavor;
  readonly fs: PathFs;
  /** The absolute globs each sensitive and never-writable rule id compiled to. */
  readonly rules: {
    readonly sensitive: ReadonlyMap<string, readonly string[]>;
    readonly neverWritable: ReadonlyMap<string, readonly string[]>;
  };
  checkSensitive(input: string, access: PathAccess, roots: readonly WorkspaceRoot[]): PathDenial | null;
  /**
   * Step 3, and step 2 again (so a caller that only resolves is still safe): canonicalize,
   * refuse sensitive and never-writable paths, then require a root that grants `access`.
   */
  resolve(argument: string, input: string, access: PathAccess, roots: readonly WorkspaceRoot[]): PathCheck;
  checkPattern(
    pattern: string,
    access: PathAccess,
    roots: readonly WorkspaceRoot[],
    tree: boolean,
  ): PathDenial | null;
  linksBeneath(input: string, roots: readonly WorkspaceRoot[], stop?: (link: string) => boolean): LinkWalk;
  /** Canonicalization alone, relative inputs against the primary root of `roots`. */
  canonicalize(input: string, roots: readonly WorkspaceRoot[]): Canonicalization;
}

/** Entries a link-following walk looks at before it gives up (and a human decides). */
export const MAX_WALK_ENTRIES = 20_000;

function configuredPath(flavor: PathFlavor, path: string, what: string): AbsolutePath {
  const parsed = parseAbsolute(flavor, path);
  if (parsed === null) throw new TypeError(`path guard: ${what} must be an absolute ${flavor.name} path`);
  return parsed;
}

function rootsDenial(reason: ReasonCode, id: PathRuleId, message: string): PathDenial {
  return { reason, rule: { id, source: 'roots' }, message };
}

/**
 * Builds a path guard from the built-in rules plus config extras. Guarantees: never throws after
 * construction (every bad input is a denial); a sensitive path is refused for read and write
 * whether named directly, through `~`, `..` or any symlink on the way (the lexical path, the
 * canonical path and every link passed through are all checked); a never-writable path is
 * refused for write; a resolved target always lies, canonically, inside a root granting the
 * access. Throws a `TypeError` at construction when `stateDir`, `configFile` or `home` is not an
 * absolute path of the flavor.
 */
export function createPathGuard(options: PathGuardOptions): SnotraPathGuard {
  const flavor = options.flavor ?? (process.platform === 'win32' ? windowsFlavor : posixFlavor);
  const fs = options.fs ?? nodeFs;
  const maxSymlinks = options.maxSymlinks ?? DEFAULT_MAX_SYMLINKS;
  const home = configuredPath(flavor, options.home ?? os.homedir(), 'home');
  const stateDir = configuredPath(flavor, options.stateDir, 'stateDir');
  const configFile = configuredPath(flavor, options.configFile, 'configFile');
  const noBase = { ruleId: 'roots.no-primary-root' as const, message: 'no primary root' };
  const baseContext: CanonicalizeContext = { flavor, fs, home, base: noBase, maxSymlinks };

  const keyOf = (p: AbsolutePath): string => flavor.matchKey(p.anchor, p.segments);
  const canonicalKey = (literal: string): string | null => {
    const parsed = parseAbsolute(flavor, literal);
    if (parsed === null) return null;
    const c = canonicalize(parsed.path, baseContext);
    return c.ok ? keyOf(c.canonical) : null;
  };
  const homeKeys = [keyOf(home)];
  const canonicalHome = canonicalKey(home.path);
  if (canonicalHome !== null && canonicalHome !== homeKeys[0]) homeKeys.push(canonicalHome);
  const anchors = { flavor, homeKeys, canonicalKey };

  // The runtime's own paths as literal globs, under their configured and canonical spellings.
  const literalPatterns = (p: AbsolutePath): string[] => {
    const canonical = canonicalKey(p.path);
    return [...new Set([keyOf(p), ...(canonical === null ? [] : [canonical])])].map(escapeGlob);
  };
  const runtimeRules: PathRule[] = [
    { id: RUNTIME_RULE_IDS.stateDir, description: 'runtime state', patterns: literalPatterns(stateDir) },
    { id: RUNTIME_RULE_IDS.configFile, description: 'runtime config', patterns: literalPatterns(configFile) },
  ];
  const sensitive: RuleMatcher = compileRules(
    [...SENSITIVE_PATHS, ...runtimeRules, ...(options.extraSensitive ?? [])],
    anchors,
  );
  const neverWritable: RuleMatcher = compileRules(
    [...NEVER_WRITABLE_PATHS, ...(options.extraNeverWritable ?? [])],
    anchors,
  );

  function contextFor(rootList: readonly WorkspaceRoot[]): CanonicalizeContext {
    const primaries = rootList.filter((r) => r.primary);
    if (primaries.length > 1) {
      return {
        ...baseContext,
        base: { ruleId: 'roots.ambiguous-primary-root', message: 'more than one primary root' },
      };
    }
    const primary = primaries[0];
    if (primary === undefined) {
      return {
        ...baseContext,
        base: { ruleId: 'roots.no-primary-root', message: 'there is no primary root' },
      };
    }
    const base = rootPath(primary);
    return {
      ...baseContext,
      base: base ?? {
        ruleId: 'roots.no-primary-root',
        message: `primary root "${primary.id}" is not absolute`,
      },
    };
  }

  function rootPath(root: WorkspaceRoot): AbsolutePath | null {
    if (root.path === '~' || root.path.startsWith('~/') || root.path.startsWith('~\\')) {
      const parsed = flavor.parse(root.path, { expandHome: true });
      return parsed.kind === 'home'
        ? absolutePath(flavor, home.anchor, [...home.segments, ...parsed.segments])
        : null;
    }
    return parseAbsolute(flavor, root.path);
  }

  function canonicalRoots(rootList: readonly WorkspaceRoot[]): CanonicalRoot[] {
    const out: CanonicalRoot[] = [];
    for (const root of rootList) {
      const path = rootPath(root);
      if (path === null) continue;
      const c = canonicalize(path.path, baseContext);
      // A root that cannot be canonicalized (dangling, loop, unreadable) authorizes nothing.
      if (c.ok) out.push({ root, path: c.canonical });
    }
    return out;
  }

  function ruleDenial(c: Canonicalization, access: PathAccess): PathDenial | null {
    const keys: string[] = c.links.map(keyOf);
    if (c.lexical !== null) keys.unshift(keyOf(c.lexical));
    if (c.ok) keys.unshift(keyOf(c.canonical));
    const hit = sensitive.match(keys);
    if (hit !== null) {
      return {
        reason: 'sensitive_path',
        rule: { id: hit, source: 'sensitive-path' },
        message: 'the path is a sensitive host path',
      };
    }
    if (access === 'write') {
      const never = neverWritable.match(keys);
      if (never !== null) {
        return {
          reason: 'never_writable_path',
          rule: { id: never, source: 'sensitive-path' },
          message: 'the path is never writable by tools',
        };
      }
    }
    return null;
  }

  function firstDenial(c: Canonicalization, access: PathAccess): PathDenial | null {
    const denial = ruleDenial(c, access);
    if (denial !== null) return denial;
    if (!c.ok) return rootsDenial('invalid_path', c.ruleId, c.message);
    return null;
  }

  /** The first rule of `matcher` a path `glob` could match (or reach beneath, for a tree). */
  function overlapping(matcher: RuleMatcher, globs: readonly string[], tree: boolean): string | null {
    for (const [id, ruleGlobs] of matcher.globs) {
      for (const g of ruleGlobs) {
        // A name-anywhere rule (`**/.env`) would hold inside any tree, and for any glob whose
        // last name starts with a wildcard (`rm *.json`): there only anchored rules count.
        const anywhere = g.startsWith('**');
        if (tree && anywhere) {
          // ...but a tree that is, or lies inside, the folder such a rule names holds it
          // (`rm -rf .git` holds `**/.git/config`; `mv .git/hooks x`).
          if (treeIsRuleFolder(g, globs)) return id;
          continue;
        }
        for (const glob of globs) {
          if (anywhere && /^[*?[]/.test(glob.slice(glob.lastIndexOf('/') + 1))) continue;
          if (globsOverlap(glob, g, tree)) return id;
        }
      }
    }
    return null;
  }

  /** True when a tree glob names a folder on the way to what the anywhere rule `g` protects. */
  function treeIsRuleFolder(g: string, globs: readonly string[]): boolean {
    const segs = g.slice(3).split('/');
    for (let k = 1; k < segs.length; k++) {
      const folder = '**/' + segs.slice(0, k).join('/');
      if (folder.endsWith('/**')) break;
      for (const glob of globs) {
        // Only a tree named literally (`rm -rf *` is not `rm -rf .git`: the glob rules see it).
        if (hasGlob(glob.slice(glob.lastIndexOf('/') + 1))) continue;
        if (globsOverlap(glob, folder, false)) return true;
      }
    }
    return false;
  }

  function checkPattern(
    pattern: string,
    access: PathAccess,
    rootList: readonly WorkspaceRoot[],
    tree: boolean,
  ): PathDenial | null {
    const segments = pattern.split('/');
    const cut = segments.findIndex((s) => hasGlob(s));
    let literal = (cut < 0 ? segments : segments.slice(0, cut)).map(unescapeGlob).join('/');
    if (cut === 0) literal = '.';
    else if (literal === '') literal = '/';
    const rest = cut < 0 ? '' : segments.slice(cut).join('/');
    const c = canonicalize(literal, contextFor(rootList));
    const direct = firstDenial(c, access);
    if (direct !== null && direct.reason !== 'invalid_path') return direct;
    const bases: string[] = c.links.map(keyOf);
    if (c.lexical !== null) bases.unshift(keyOf(c.lexical));
    if (c.ok) bases.unshift(keyOf(c.canonical));
    const globs = bases.map((b) => {
      const base = escapeGlob(b).replace(/\/+$/, '');
      return rest === '' ? base || '/' : `${base}/${rest}`;
    });
    const hit = overlapping(sensitive, globs, tree);
    if (hit !== null) {
      const what = tree ? 'the tree holds a sensitive host path' : 'the glob can match a sensitive host path';
      return { reason: 'sensitive_path', rule: { id: hit, source: 'sensitive-path' }, message: what };
    }
    if (access === 'write') {
      const never = overlapping(neverWritable, globs, tree);
      if (never !== null) {
        return {
          reason: 'never_writable_path',
          rule: { id: never, source: 'sensitive-path' },
          message: 'the glob can match a path never writable by tools',
        };
      }
    }
    return null;
  }

  /**
   * The symlinks reachable by a walk of `input` that follows links: breadth-first over real
   * directories, into every link's target directory too (each directory once), at most
   * MAX_WALK_ENTRIES entries. A glob in `input` walks its literal part (a superset). Stops early
   * (incomplete) when `stop` returns true for a link found.
   */
  function linksBeneath(
    input: string,
    rootList: readonly WorkspaceRoot[],
    stop?: (link: string) => boolean,
  ): LinkWalk {
    const list = fs.list?.bind(fs);
    if (list === undefined) return { links: [], complete: false };
    const segments = input.split('/');
    const cut = segments.findIndex((s) => hasGlob(s));
    const literal = cut < 0 ? input : segments.slice(0, cut).map(unescapeGlob).join('/') || '.';
    const ctx = contextFor(rootList);
    const start = canonicalize(literal, ctx);
    if (!start.ok) return { links: [], complete: false };
    const links: string[] = [];
    const seen = new Set<string>();
    const queue: AbsolutePath[] = [start.canonical];
    let budget = MAX_WALK_ENTRIES;
    for (let at = 0, next = queue[0]; next !== undefined; next = queue[++at]) {
      const key = keyOf(next);
      if (seen.has(key) || fs.kind(next.path) !== 'directory') continue;
      seen.add(key);
      const names = list(next.path);
      if (names === null) return { links, complete: false };
      for (const name of names) {
        if (--budget < 0) return { links, complete: false };
        const child = absolutePath(flavor, next.anchor, [...next.segments, name]);
        const kind = fs.kind(child.path);
        if (kind === 'directory') queue.push(child);
        else if (kind === 'symlink') {
          links.push(child.path);
          if (stop?.(child.path) === true) return { links, complete: false };
          const target = canonicalize(child.path, ctx);
          if (!target.ok) return { links, complete: false };
          queue.push(target.canonical);
        } else if (kind === 'error') return { links, complete: false };
      }
    }
    return { links, complete: true };
  }

  return {
    flavor,
    fs,
    rules: { sensitive: sensitive.globs, neverWritable: neverWritable.globs },
    checkPattern,
    linksBeneath,
    canonicalize(input, rootList) {
      return canonicalize(input, contextFor(rootList));
    },
    checkSensitive(input, access, rootList) {
      return firstDenial(canonicalize(input, contextFor(rootList)), access);
    },
    resolve(argument, input, access, rootList) {
      const c = canonicalize(input, contextFor(rootList));
      const target = (resolved: string | null, root: WorkspaceRoot | null): Target => ({
        argument,
        input,
        resolved,
        root: root?.id ?? null,
        access: root?.access ?? null,
      });
      const denial = firstDenial(c, access);
      if (denial !== null || !c.ok) {
        const d =
          denial ?? rootsDenial('invalid_path', 'roots.unreadable-path', 'the path cannot be canonicalized');
        return { ok: false, ...d, target: target(c.ok ? c.canonical.path : null, null) };
      }
      const resolved = c.canonical.path;
      const containing = containingRoots(flavor, canonicalRoots(rootList), c.canonical);
      const chosen = containing[0];
      if (chosen === undefined) {
        return {
          ok: false,
          ...rootsDenial('outside_roots', 'roots.outside', 'the path is outside every authorized root'),
          target: target(resolved, null),
        };
      }
      const denier = deniedBy(flavor, containing, c.canonical);
      if (denier !== null) {
        return {
          ok: false,
          ...rootsDenial(
            'path_denied',
            'roots.deny-glob',
            `a deny glob of root "${denier.root.id}" matches the path`,
          ),
          target: target(resolved, denier.root),
        };
      }
      if (access === 'write' && chosen.root.access !== 'read-write') {
        return {
          ok: false,
          ...rootsDenial('read_only_root', 'roots.read-only', `root "${chosen.root.id}" is read-only`),
          target: target(resolved, chosen.root),
        };
      }
      return { ok: true, target: target(resolved, chosen.root), canonical: c.canonical };
    },
  };
}
