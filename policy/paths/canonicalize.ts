/**
 * Canonicalization: turn an input path into the one absolute path the kernel would open, without
 * requiring the path to exist. Symlinks are followed component by component (so `link/..` means
 * the parent of the link's target, as the kernel does); a missing tail is kept as written.
 */
import type { PathFlavor } from './flavor.ts';
import type { PathFs } from './fs.ts';
import type { PathRuleId } from './rules.ts';

/** Linux's own limit on symlinks followed while resolving one path (MAXSYMLINKS). */
export const DEFAULT_MAX_SYMLINKS = 40;

/** An absolute path as anchor plus segments, with its native spelling. */
export interface AbsolutePath {
  readonly anchor: string;
  readonly segments: readonly string[];
  readonly path: string;
}

/** Where relative and `~` inputs start, and how far symlinks may be followed. */
export interface CanonicalizeContext {
  readonly flavor: PathFlavor;
  readonly fs: PathFs;
  /** The home directory (absolute, as configured) for `~`; null when unknown. */
  readonly home: AbsolutePath | null;
  /** The base of relative inputs (the primary root, as configured), or why there is none. */
  readonly base: AbsolutePath | { readonly ruleId: PathRuleId; readonly message: string };
  readonly maxSymlinks: number;
}

/**
 * Outcome of canonicalization. On success `canonical` contains no symlink in its existing part,
 * no `.`/`..`, and `exists` says whether the whole path exists; `lexical` is the input made
 * absolute with `.`/`..` applied to the text only; `links` lists every symlink followed (their own
 * locations), so rules can also be checked against the paths passed through.
 */
export type Canonicalization =
  | {
      readonly ok: true;
      readonly lexical: AbsolutePath;
      readonly canonical: AbsolutePath;
      readonly links: readonly AbsolutePath[];
      readonly exists: boolean;
    }
  | {
      readonly ok: false;
      readonly ruleId: PathRuleId;
      readonly message: string;
      readonly lexical: AbsolutePath | null;
      readonly links: readonly AbsolutePath[];
    };

// C0 and C1 controls, DEL, and the bidi overrides/isolates that make a path display as another.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0001-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Failure = Extract<Canonicalization, { ok: false }>;

function fail(
  ruleId: PathRuleId,
  message: string,
  lexical: AbsolutePath | null,
  links: AbsolutePath[],
): Failure {
  return { ok: false, ruleId, message, lexical, links };
}

/** Checks the characters of an input or link target; null when acceptable. */
export function checkCharacters(
  text: string,
  flavor: PathFlavor,
): { ruleId: PathRuleId; message: string } | null {
  if (text.length === 0) return { ruleId: 'roots.empty-path', message: 'the path is empty' };
  if (text.includes('\u0000')) return { ruleId: 'roots.nul-byte', message: 'the path contains a NUL byte' };
  if (CONTROL.test(text)) {
    return { ruleId: 'roots.control-character', message: 'the path contains a control character' };
  }
  if (text.length > flavor.maxLength) {
    return {
      ruleId: 'roots.path-too-long',
      message: `the path is longer than ${flavor.maxLength} characters`,
    };
  }
  return null;
}

/** Builds an `AbsolutePath` from an anchor and segments. */
export function absolutePath(flavor: PathFlavor, anchor: string, segments: readonly string[]): AbsolutePath {
  return { anchor, segments, path: flavor.format(anchor, segments) };
}

/** Applies `.` and `..` to the text only (`..` at the anchor stays at the anchor). */
export function lexicalNormalize(
  flavor: PathFlavor,
  anchor: string,
  segments: readonly string[],
): AbsolutePath {
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return absolutePath(flavor, anchor, out);
}

/**
 * Parses a configured absolute path (a root, the home directory) into an `AbsolutePath` with
 * `.`/`..` applied lexically; null when it is not a valid absolute path of the flavor.
 */
export function parseAbsolute(flavor: PathFlavor, path: string): AbsolutePath | null {
  if (checkCharacters(path, flavor) !== null) return null;
  const parsed = flavor.parse(path, { expandHome: false });
  if (parsed.kind !== 'absolute') return null;
  return lexicalNormalize(flavor, parsed.anchor, parsed.segments);
}

interface Pending {
  readonly segment: string;
  /** True when the segment came from a symlink target: it must exist, or the link dangles. */
  readonly fromLink: boolean;
}

/**
 * Follows `segments` from `anchor` through the file system. Never throws; a dangling link, a
 * loop, an unreadable component or a file used as a directory is a failure.
 */
function walk(
  ctx: CanonicalizeContext,
  startAnchor: string,
  segments: readonly string[],
  lexical: AbsolutePath,
): Canonicalization {
  const { flavor, fs } = ctx;
  const links: AbsolutePath[] = [];
  let anchor = startAnchor;
  const prefix: string[] = [];
  // Stack of segments still to apply, last element next.
  const pending: Pending[] = segments.map((segment) => ({ segment, fromLink: false })).reverse();
  let missingDepth = 0;
  let lastKind: 'directory' | 'file' | 'other' | 'missing' = 'directory';
  let followed = 0;

  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { segment, fromLink } = next;
    if (lastKind === 'file' || lastKind === 'other') {
      return fail(
        'roots.not-a-directory',
        `"${flavor.format(anchor, prefix)}" is not a directory`,
        lexical,
        links,
      );
    }
    if (segment === '.') continue;
    if (segment === '..') {
      if (prefix.length > 0) prefix.pop();
      if (missingDepth > 0) missingDepth--;
      lastKind = missingDepth > 0 ? 'missing' : 'directory';
      continue;
    }
    if (missingDepth > 0) {
      if (fromLink)
        return fail('roots.dangling-symlink', 'a symlink on the way points at nothing', lexical, links);
      prefix.push(segment);
      missingDepth++;
      continue;
    }
    const candidatePath = absolutePath(flavor, anchor, [...prefix, segment]);
    const candidate = candidatePath.path;
    const kind = fs.kind(candidate);
    if (kind === 'error')
      return fail('roots.unreadable-path', `cannot examine "${candidate}"`, lexical, links);
    if (kind === 'missing') {
      if (fromLink)
        return fail(
          'roots.dangling-symlink',
          `a symlink on the way to "${candidate}" dangles`,
          lexical,
          links,
        );
      prefix.push(segment);
      missingDepth = 1;
      lastKind = 'missing';
      continue;
    }
    if (kind !== 'symlink') {
      prefix.push(segment);
      lastKind = kind;
      continue;
    }
    followed++;
    links.push(candidatePath);
    if (followed > ctx.maxSymlinks) {
      return fail('roots.symlink-loop', `more than ${ctx.maxSymlinks} symlinks (a loop?)`, lexical, links);
    }
    const target = fs.readlink(candidate);
    if (target === null)
      return fail('roots.unreadable-path', `cannot read the link "${candidate}"`, lexical, links);
    const problem = checkCharacters(target, flavor);
    if (problem !== null)
      return fail(problem.ruleId, `link "${candidate}": ${problem.message}`, lexical, links);
    const parsed = flavor.parse(target, { expandHome: false });
    if (parsed.kind === 'invalid')
      return fail(parsed.ruleId, `link "${candidate}": ${parsed.message}`, lexical, links);
    if (parsed.kind === 'absolute') {
      anchor = parsed.anchor;
      prefix.length = 0;
    }
    for (let i = parsed.segments.length - 1; i >= 0; i--) {
      pending.push({ segment: parsed.segments[i] ?? '.', fromLink: true });
    }
  }
  return {
    ok: true,
    lexical,
    canonical: absolutePath(flavor, anchor, prefix),
    links,
    exists: missingDepth === 0,
  };
}

/**
 * Canonicalizes `input`: `~` and `~/x` against the home directory, relative paths against the
 * base, then every existing symlink ancestor followed (chains, relative and absolute targets),
 * `..` applied after the link before it, a missing tail kept as written. Guarantees: never
 * throws; refuses empty input, NUL bytes, control characters, over-long paths, `~name`, dangling
 * symlinks anywhere on the way, more than `maxSymlinks` links, unreadable components and files
 * used as directories; on success the existing part of `canonical` is exactly what
 * `realpath(3)` returns for it.
 */
export function canonicalize(input: string, ctx: CanonicalizeContext): Canonicalization {
  const { flavor } = ctx;
  const problem = checkCharacters(input, flavor);
  if (problem !== null) return fail(problem.ruleId, problem.message, null, []);
  const parsed = flavor.parse(input, { expandHome: true });
  let anchor: string;
  let segments: readonly string[];
  switch (parsed.kind) {
    case 'invalid':
      return fail(parsed.ruleId, parsed.message, null, []);
    case 'home':
      if (ctx.home === null) return fail('roots.no-home', 'no home directory is known for "~"', null, []);
      anchor = ctx.home.anchor;
      segments = [...ctx.home.segments, ...parsed.segments];
      break;
    case 'relative':
      if (!('path' in ctx.base)) return fail(ctx.base.ruleId, ctx.base.message, null, []);
      anchor = ctx.base.anchor;
      segments = [...ctx.base.segments, ...parsed.segments];
      break;
    case 'absolute':
      anchor = parsed.anchor;
      segments = parsed.segments;
      break;
  }
  return walk(ctx, anchor, segments, lexicalNormalize(flavor, anchor, segments));
}
