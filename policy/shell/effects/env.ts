/**
 * What the command-level analysis sees of its surroundings (cwd, stdin, recursion) and where it
 * reports what it found. Implemented by the walker (syntax/walk.ts).
 */
import type { Field } from '../syntax/field.ts';
import type { CautionRuleId, HardlineRuleId, UnanalyzableRuleId } from '../rules/ids.ts';
import type { TreeHow } from './findings.ts';
import type { PathRef } from './paths.ts';

/** Where a command's stdin comes from, as far as code-reading commands care. */
export type StdinSource =
  /** The stdin of the tool process (nothing the command string controls). */
  | { readonly kind: 'inherit' }
  /**
   * A pipe from an earlier pipeline stage. `code` is the exact text the stage prints when it is
   * a literal `echo`/`printf` (else null); `items` the words it yields for xargs (else null).
   */
  | { readonly kind: 'pipe'; readonly code: string | null; readonly items: readonly Field[] | null }
  /** `<<< word`: `code` is the literal text (with its trailing newline), else null. */
  | { readonly kind: 'herestring'; readonly code: string | null }
  /** A here-document, a file, a process substitution or a descriptor. */
  | { readonly kind: 'opaque' };

/** A rule verdict: a hardline match, a reason the rule cannot decide, or nothing. */
export type Verdict =
  | { readonly match: HardlineRuleId; readonly detail: string }
  | { readonly unknown: UnanalyzableRuleId; readonly detail: string }
  | null;

/** Resolution of a path-like field against the tracked working directory. */
export interface Resolved {
  /** The literal candidates (one per possible cwd). */
  readonly refs: readonly PathRef[];
  /** True when the field or the cwd is only known at run time. */
  readonly unknown: boolean;
}

/** The analysis context of one simple command. */
export interface CommandEnv {
  /** Recursion depth of nested code (sh -c, eval, ...); 0 for the command string itself. */
  readonly depth: number;
  /** Where stdin comes from. */
  readonly stdin: StdinSource;
  /** Report a hardline match (the first one is kept). */
  hardline(ruleId: HardlineRuleId, detail: string): void;
  /** Report that the command cannot be analyzed (the first reason is kept). */
  unanalyzable(ruleId: UnanalyzableRuleId, detail: string): void;
  /** Report an effect the analysis cannot account for (a human decides, even in `allow`). */
  caution(ruleId: CautionRuleId, detail: string): void;
  /** Report a verdict of a rule. */
  verdict(v: Verdict): void;
  /** Resolve a path-like field against the tracked cwd. */
  resolve(field: Field): Resolved;
  /** Record a literal path the command reads. */
  read(field: Field): void;
  /**
   * Record a path the command writes. Choice for paths only known at run time: when `content`
   * (bytes go into the path: redirections, tee, cp/mv/install destinations, dd of=, curl -o,
   * truncate, ...) the command is unanalyzable, because the target could be a device or a path
   * outside the roots; otherwise (rm without -r, touch, mkdir, chmod without -R, ...) the path is
   * left out of `writes` and the command stays analyzable. Literal paths are recorded as written
   * (joined to a tracked `cd`), `~` kept for the engine to canonicalize; harmless devices
   * (/dev/null, /dev/stderr, ...) are not writes, other devices are hardline.
   */
  write(field: Field, content: boolean): void;
  /**
   * Record a path-looking argument of a program without a table: it may be read or written, so
   * it must be static and is checked against the roots and sensitive paths.
   */
  probe(field: Field): void;
  /**
   * Record a directory the command walks recursively (also recorded as a read or write);
   * `how.follow` when the walk follows the symlinks it meets (each link target is walked too),
   * `how.names` when it only lists names.
   */
  tree(field: Field, access: 'read' | 'write', how?: TreeHow): void;
  /** Record a link the command makes (later uses of that path are not static). */
  link(field: Field): void;
  /** True when `field` names a file written earlier in the same command string. */
  wasWritten(field: Field): boolean;
  /**
   * Analyze literal code (sh -c, eval, trap, ...) one level deeper. `sameShell` when the code
   * runs in the current shell (eval): its `cd` persists. `stdin` defaults to this command's.
   */
  analyzeCode(code: string, options?: { readonly sameShell?: boolean; readonly stdin?: StdinSource }): void;
  /**
   * True when `code`, read as a command line, would do something worth a human's look: a
   * hardline match, an unanalyzable part, a caution, a recursive walk, or an absolute or home
   * path. Reports nothing itself.
   */
  hasEffects(code: string): boolean;
  /** Called with the program names of each command layer (fork-bomb detection). */
  noteProgram(names: readonly string[]): void;
  /** Apply a `cd`/`pushd`/`popd` to the tracked cwd. */
  changeDir(kind: 'cd' | 'pushd' | 'popd', target: Field | null, physical?: boolean): void;
  /** A copy of this env with another stdin. */
  withStdin(stdin: StdinSource): CommandEnv;
  /** A copy of this env whose working directory is `target` (env -C, sudo -D, sudo -i). */
  withChdir(target: Field): CommandEnv;
}
