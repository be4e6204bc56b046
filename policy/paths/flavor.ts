/**
 * Path flavors: how a path string splits into an anchor (`/`, `C:\`, `\\server\share\`) and
 * segments, how segments are validated, and how paths compare. The flavor is injected, so the
 * Windows rules run (and are tested) on any host.
 */
import type { PathRuleId } from './rules.ts';

/** The two supported path flavors. */
export const PathFlavorName = { posix: 'posix', windows: 'windows' } as const;
export type PathFlavorName = (typeof PathFlavorName)[keyof typeof PathFlavorName];

/** A refusal produced while parsing: a rule id and a message naming the offending part. */
export interface PathProblem {
  readonly ruleId: PathRuleId;
  readonly message: string;
}

/**
 * A parsed path. Segments are validated and normalized per segment (Windows: trailing dots and
 * spaces stripped, `::$DATA` removed) but `.` and `..` are kept for the canonicalizer, which
 * applies them with kernel semantics (after the symlinks before them are followed).
 */
export type ParsedPath =
  | { readonly kind: 'absolute'; readonly anchor: string; readonly segments: readonly string[] }
  | { readonly kind: 'relative'; readonly segments: readonly string[] }
  | { readonly kind: 'home'; readonly segments: readonly string[] }
  | ({ readonly kind: 'invalid' } & PathProblem);

/** Options of `PathFlavor.parse`. */
export interface ParseOptions {
  /** Whether a leading `~` means the home directory (true for inputs, false for link targets). */
  readonly expandHome: boolean;
}

/**
 * One path flavor. Guarantees: `parse` never throws; `format(anchor, segments)` produces a path
 * that `parse` maps back to the same anchor and segments; `fold` makes equal exactly the
 * spellings the flavor's file systems treat as the same name.
 */
export interface PathFlavor {
  readonly name: PathFlavorName;
  /** Whether names compare case-insensitively. */
  readonly caseInsensitive: boolean;
  /** The longest input accepted, in UTF-16 code units. */
  readonly maxLength: number;
  parse(input: string, options: ParseOptions): ParsedPath;
  /** The native spelling of an absolute path. */
  format(anchor: string, segments: readonly string[]): string;
  /** A `/`-separated spelling used for glob matching (`/a/b`, `C:/a/b`, `//srv/share/a`). */
  matchKey(anchor: string, segments: readonly string[]): string;
  /**
   * The comparison form of an anchor or a segment. Never folds two spellings the file system
   * keeps apart (that could place an outside path inside a root); may keep apart spellings the
   * file system folds (that only refuses more).
   */
  fold(text: string): string;
}

/**
 * Upper-cases one UTF-16 unit at a time, keeping a unit whose upper case is not a single unit
 * (`ß`, `ŉ`): the way NTFS compares names through its up-case table, unlike `toUpperCase`, which
 * would make `STRASSE` equal to `Straße`.
 */
export function simpleUpperCase(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(text)) return text.toUpperCase();
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charAt(i);
    const upper = unit.toUpperCase();
    out += upper.length === 1 ? upper : unit;
  }
  return out;
}

function splitSegments(text: string, separator: string): string[] {
  return text.split(separator).filter((segment) => segment.length > 0);
}

/** The POSIX flavor (Linux, macOS, BSD): `/` separates, names are byte strings, case matters. */
export const posixFlavor: PathFlavor = {
  name: 'posix',
  caseInsensitive: false,
  maxLength: 4096,
  parse(input, options) {
    if (options.expandHome && input.startsWith('~')) {
      if (input === '~' || input.startsWith('~/')) {
        return { kind: 'home', segments: splitSegments(input.slice(1), '/') };
      }
      return {
        kind: 'invalid',
        ruleId: 'roots.tilde-user',
        message: 'a "~name" path is not expanded; write "./~name" for a file of that name',
      };
    }
    if (input.startsWith('/')) return { kind: 'absolute', anchor: '/', segments: splitSegments(input, '/') };
    return { kind: 'relative', segments: splitSegments(input, '/') };
  },
  format(anchor, segments) {
    return anchor + segments.join('/');
  },
  matchKey(anchor, segments) {
    return anchor + segments.join('/');
  },
  fold(text) {
    return text;
  },
};
