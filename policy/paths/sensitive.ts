/**
 * Compiles `PathRule` data into matchers over match keys (`/`-separated absolute spellings, see
 * `PathFlavor.matchKey`). Matching is case-insensitive on every flavor: a case-insensitive file
 * system (Windows, default macOS) opens `~/.SSH` as `~/.ssh`, and being stricter on Linux costs
 * nothing real.
 */
import picomatch from 'picomatch';
import { assertPicomatchTerminates } from './picomatch-guard.ts';
import { simpleUpperCase, type PathFlavor } from './flavor.ts';
import { mayMatch, requiredLiterals } from './glob-literals.ts';
import type { PathRule } from './sensitive-defaults.ts';

/** Home locations of any user, so `~/.ssh` also covers other accounts' `.ssh`. */
const OTHER_HOMES: Readonly<Record<PathFlavor['name'], readonly string[]>> = {
  posix: ['/home/*', '/root', '/Users/*', '/var/root'],
  windows: ['*:/Users/*'],
};

/** Escapes glob metacharacters so a literal path (a home dir, a state dir) matches only itself. */
export function escapeGlob(literal: string): string {
  return literal.replace(/[\\*?[\]{}()!+@|^$]/g, '\\$&');
}

/** Options shared by every matcher: dotfiles match, case is ignored, `\` is an escape. */
export const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, nocase: true, windows: false };

/** How patterns are anchored for one guard. */
export interface RuleAnchors {
  readonly flavor: PathFlavor;
  /** Match keys of the home directory (as configured and canonical; duplicates are fine). */
  readonly homeKeys: readonly string[];
  /**
   * The canonical match key of a literal absolute path (e.g. `/etc` → `/private/etc` on macOS),
   * or null when it cannot be canonicalized.
   */
  readonly canonicalKey: (literalKey: string) => string | null;
}

/** A compiled rule set: the id of the first rule matching any of the keys, or null. */
export interface RuleMatcher {
  match(keys: readonly string[]): string | null;
  /** The absolute globs each rule id compiled to (for diagnostics and tests). */
  readonly globs: ReadonlyMap<string, readonly string[]>;
}

function isAbsolutePattern(pattern: string): boolean {
  return pattern.startsWith('/') || /^([A-Za-z]|\*):\//.test(pattern);
}

/** Splits a glob into its literal leading part and the rest (`/proc/{pid}/environ` → `/proc` + the rest). */
function splitLiteral(glob: string): { literal: string; rest: string } {
  const scan = picomatch.scan(glob);
  const literal = scan.isGlob ? scan.base : glob;
  return glob.startsWith(literal)
    ? { literal, rest: glob.slice(literal.length) }
    : { literal: '', rest: glob };
}

/**
 * `glob` anchored at the literal absolute `literal`, plus the same glob anchored at the canonical
 * form of `literal` when that differs (so `~/.ssh` → `~/dotfiles/ssh` and `/etc` → `/private/etc`
 * are covered under both spellings).
 */
function anchoredGlobs(anchors: RuleAnchors, prefix: string, literal: string, rest: string): string[] {
  const out = [escapeGlob(prefix) + literal.slice(prefix.length) + rest];
  if (literal.length === 0 || literal.includes('\\')) return out;
  const canonical = anchors.canonicalKey(literal);
  if (canonical !== null && canonical !== literal) out.push(escapeGlob(canonical) + rest);
  return out;
}

/** The absolute globs one pattern stands for (before the "and everything beneath" suffix). */
function expandPattern(pattern: string, anchors: RuleAnchors): string[] {
  const trimmed = pattern.replace(/\/+$/, '');
  if (trimmed === '~' || trimmed.startsWith('~/')) {
    const { literal, rest } = splitLiteral(trimmed.slice(1));
    const injected = anchors.homeKeys.flatMap((home) => {
      const base = home.replace(/\/$/, '');
      return anchoredGlobs(anchors, base, base + literal, rest);
    });
    const others = OTHER_HOMES[anchors.flavor.name].map((home) => home + trimmed.slice(1));
    return [...injected, ...others];
  }
  if (isAbsolutePattern(trimmed)) {
    const { literal, rest } = splitLiteral(trimmed);
    if (literal.length === 0 || literal.startsWith('*')) return [trimmed];
    return [trimmed, ...anchoredGlobs(anchors, '', literal, rest).slice(1)];
  }
  return [trimmed.startsWith('**/') ? trimmed : `**/${trimmed}`];
}

/**
 * The keys plus their per-unit upper-case forms. Case-insensitive regular expressions fold only
 * simple cases; matching the up-cased form too catches spellings such as `.ſſh` (long s), which
 * a case-insensitive file system may open as `.SSH`. Only ever adds matches.
 */
export function withCaseVariants(keys: readonly string[]): string[] {
  const out = [...keys];
  const add = (k: string): void => {
    if (!out.includes(k)) out.push(k);
  };
  for (const key of keys) {
    // NFC and NFKC spellings too: a file system may open a decomposed name (NFD, macOS) or a
    // compatibility character (U+212A KELVIN SIGN for K) as the plain name.
    for (const form of [key, key.normalize('NFC'), key.normalize('NFKC')]) {
      add(form);
      add(simpleUpperCase(form));
    }
  }
  return out;
}

/** One regular expression matching any of `globs` (all compiled with `GLOB_OPTIONS`). */
function unionRegExp(globs: readonly string[], sourceOf: (glob: string) => string): RegExp {
  if (globs.length === 0) return /(?!)/;
  // A repeated glob (the home dir as configured and as canonical, `/root` twice) adds nothing
  // to the language but doubles V8's compile time of the expression.
  const sources = [...new Set(globs)].map(sourceOf);
  return new RegExp(sources.map((source) => `(?:${source})`).join('|'), 'i');
}

/**
 * Matches after which a matcher also builds one union of all its rules to reject the common
 * case (no rule matches) in one pass. V8 compiles that union (~400 globs) in tens of
 * milliseconds, more than a short-lived process (`snotra policy check`) ever gets back; a
 * long-lived one pays it once. Either way the result is the same: the union matches exactly
 * when some rule does.
 */
export const UNION_AFTER = 64;

/** The test of one rule: its globs' union, or match-everything when it cannot be compiled (fail closed). */
function ruleTest(globs: readonly string[], sourceOf: (glob: string) => string): (key: string) => boolean {
  try {
    const re = unionRegExp(globs, sourceOf);
    return (key) => re.test(key);
  } catch {
    return () => true;
  }
}

/**
 * Compiles rules. Guarantees: a rule matches a key when the key is one of its patterns' paths or
 * lies beneath one; rules are tried in the given order; an uncompilable pattern makes its rule
 * match everything (fail closed) rather than nothing.
 *
 * The absolute globs (which read the file system for the canonical spellings of the rules'
 * literal parts) are made here, at construction. Their regular expressions are built when a
 * rule is first tried: translating ~480 globs through picomatch costs ~10 ms that a short-lived
 * process deciding a call without a path (`snotra policy check` of `ls | wc -l`) never needs.
 * Building from the same globs later gives the same expression, so a match is the same either way.
 */
export function compileRules(rules: readonly PathRule[], anchors: RuleAnchors): RuleMatcher {
  const globs = new Map<string, string[]>();
  const compiled: {
    id: string;
    globs: readonly string[];
    /** Each glob's required literals (see `requiredLiterals`): a rule no key can match is skipped uncompiled. */
    literals: ReadonlyArray<readonly string[] | null>;
    test: ((key: string) => boolean) | null;
  }[] = [];
  // Each glob is translated once, for its rule and for the union.
  const sources = new Map<string, string>();
  const sourceOf = (glob: string): string => {
    let source = sources.get(glob);
    if (source === undefined) {
      assertPicomatchTerminates(glob);
      source = picomatch.makeRe(glob, GLOB_OPTIONS).source;
      sources.set(glob, source);
    }
    return source;
  };
  for (const rule of rules) {
    const ruleGlobs = rule.patterns
      .flatMap((p) => expandPattern(p.normalize('NFC'), anchors))
      .map((g) => `${g}/**`);
    globs.set(rule.id, [...(globs.get(rule.id) ?? []), ...ruleGlobs]);
    compiled.push({ id: rule.id, globs: ruleGlobs, literals: ruleGlobs.map(requiredLiterals), test: null });
  }
  // One pass over a union of every rule rejects the common case (no rule matches) quickly; it
  // is built once the matcher has been used `UNION_AFTER` times.
  let any: ((key: string) => boolean) | null = null;
  let uses = 0;
  const buildAny = (): ((key: string) => boolean) => ruleTest([...globs.values()].flat(), sourceOf);
  return {
    globs,
    match(rawKeys) {
      const keys = withCaseVariants(rawKeys);
      if (any === null && ++uses > UNION_AFTER) any = buildAny();
      if (any !== null && !keys.some(any)) return null;
      const lowered = keys.map((k) => k.toLowerCase());
      for (const rule of compiled) {
        for (let k = 0; k < keys.length; k++) {
          const low = lowered[k] as string;
          if (!rule.literals.some((runs) => mayMatch(runs, low))) continue;
          rule.test ??= ruleTest(rule.globs, sourceOf);
          if (rule.test(keys[k] as string)) return rule.id;
        }
      }
      return null;
    },
  };
}
