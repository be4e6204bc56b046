/**
 * The interfaces through which the evaluation pipeline reaches steps 2–4. Each is pure from the
 * pipeline's point of view; the path guard is the only place that touches the file system.
 */
import type { ReasonCode, RuleRef, Target } from './decision.ts';
import type { PathAccess, ToolRisk } from './risk.ts';
import type { WorkspaceRoot } from './roots.ts';

/** A hard denial found by a seam: the pipeline stops with `deny` and this reason and rule. */
export interface Denial {
  readonly reason: ReasonCode;
  readonly rule: RuleRef;
  /** The target the denial is about, when it is about one. */
  readonly target?: Target;
}

/** Outcome of resolving one path argument against the roots. */
export type PathResolution =
  { readonly ok: true; readonly target: Target } | ({ readonly ok: false } & Denial);

/**
 * Steps 2 and 3 for paths: sensitive host paths, never-writable paths, canonicalization and
 * root enforcement. Implementations canonicalize (symlinks, `..`, `~`, missing leaves).
 */
export interface PathGuard {
  /**
   * Step 2: a denial when `input` (after canonicalization) is a sensitive host path, or a
   * never-writable path and `access` is `write`; otherwise null. Applies in every mode.
   */
  checkSensitive(input: string, access: PathAccess, roots: readonly WorkspaceRoot[]): Denial | null;
  /** Step 3: canonicalize `input` and check it lies in a root that grants `access`. */
  resolve(
    argument: string,
    input: string,
    access: PathAccess,
    roots: readonly WorkspaceRoot[],
  ): PathResolution;
  /**
   * Step 2 for globs and trees (shell commands): a denial when a path the unquoted glob
   * `pattern` could match is sensitive (or never-writable for `write`), or, with `tree`, when
   * the directories it names contain a sensitive path (a recursive walk would reach it).
   * Optional for guards of tools that take no shell command; without it a shell command with
   * a glob or a recursive walk needs a human.
   */
  checkPattern?(
    pattern: string,
    access: PathAccess,
    roots: readonly WorkspaceRoot[],
    tree: boolean,
  ): Denial | null;
  /**
   * Every symlink a walk of `input` that follows links reaches (beneath it, and beneath the
   * directories those links point to), as absolute paths through which a link's target is
   * checked like any path. `complete` is false when the walk was cut short (too many entries, an
   * unreadable directory): then what the walk reaches is not known. Optional: without it such
   * a walk needs a human. `stop` may end the walk early at a link (the walk is then incomplete).
   */
  linksBeneath?(input: string, roots: readonly WorkspaceRoot[], stop?: (link: string) => boolean): LinkWalk;
}

/** The symlinks a link-following walk reaches, and whether all of them were found. */
export interface LinkWalk {
  readonly links: readonly string[];
  readonly complete: boolean;
}

/** A directory a command walks recursively. */
export interface TreeWalk {
  readonly path: string;
  readonly access: 'read' | 'write';
  /** The walk follows the symlinks beneath `path` (`grep -R`, `rg -L`, `find -L`). */
  readonly follow?: boolean;
  /**
   * The walk only lists names (`find` without -exec, `ls -R`, `tree`): the runtime's own state
   * dir and config may be listed (their names hold nothing secret); credential stores may not.
   */
  readonly names?: boolean;
  /**
   * The walk adds or replaces files beneath `path` but deletes nothing (extracting an archive
   * into it): never-writable folders count (`unzip a.zip -d .git`); the runtime's own state does
   * not make it hardline.
   */
  readonly fills?: boolean;
  /**
   * A write walk whose tests may spare what it reaches (`find . -name '*.pyc' -delete`,
   * `git clean -fd` without `-x`): reaching the runtime's own state dir needs a human instead of
   * being hardline.
   */
  readonly filtered?: boolean;
}

/** What shell analysis found in one command string (step 2). */
export type CommandAnalysis =
  | {
      readonly kind: 'analyzed';
      /** The first hardline rule matched, if any. */
      readonly hardline: { readonly ruleId: string } | null;
      /** Literal path arguments the command reads (checked against sensitive paths). */
      readonly reads: readonly string[];
      /** Literal paths the command writes or deletes, incl. redirection targets. */
      readonly writes: readonly string[];
      /**
       * Path-looking arguments of programs without a table (they may read or write them):
       * they must be static, inside the roots and outside every sensitive path.
       */
      readonly probes: readonly string[];
      /** Directories a command walks recursively (`grep -r`, `tar c`, `rm -r`, `git clean`). */
      readonly trees: readonly TreeWalk[];
      /** Unquoted glob patterns in path positions (matched against sensitive paths as patterns). */
      readonly globs: readonly { readonly pattern: string; readonly access: 'read' | 'write' }[];
      /**
       * The first effect the analysis could not account for (a path computed at run time,
       * inline interpreter code, ...): in `allow` mode a human decides. Null when every effect
       * is accounted for.
       */
      readonly caution: { readonly ruleId: string; readonly detail: string } | null;
    }
  | {
      readonly kind: 'unanalyzable';
      readonly ruleId: string;
      readonly detail: string;
      /**
       * What the parts that could be followed read, write, probe and walk. A denial found in
       * them wins over the human an unanalyzable part needs (`eval "$x"; cat ~/.ssh/id_rsa` is
       * denied). Absent when nothing could be followed (a parse failure, an oversized input).
       */
      readonly partial?: PathEffects;
    };

/** The path effects of an analysis (see CommandAnalysis). */
export interface PathEffects {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
  readonly probes: readonly string[];
  readonly trees: readonly TreeWalk[];
  readonly globs: readonly { readonly pattern: string; readonly access: 'read' | 'write' }[];
}

/**
 * One simple command a shell command string runs, after `NAME=value` prefixes, wrappers (`sudo`,
 * `env`, `command`, ...) and code runners (`sh -c`, `eval`, ...) were looked through.
 */
export interface SimpleCommand {
  /** The names the program may run as: basename, lower-cased (`/usr/bin/git` → `git`). */
  readonly program: readonly string[];
  /**
   * The argument words after expansion. null for a word only known at run time (`$x`, an
   * unquoted glob): it may be any word, several words, or none.
   */
  readonly args: readonly (string | null)[];
  /**
   * Where the subcommand stands in `args` when the program's own global options are known and
   * were skipped (git: `-C x`, `-c k=v`, `--no-pager`); absent when they are not known.
   */
  readonly subcommandAt?: number;
}

/** Every simple command of a command string; `complete` is false when some part was not followed. */
export interface CommandList {
  readonly commands: readonly SimpleCommand[];
  readonly complete: boolean;
}

/** Shell analysis with a real parser. Must never throw: a failure is `unanalyzable`. */
export interface CommandAnalyzer {
  analyze(command: string): CommandAnalysis;
  /**
   * The simple commands of `command` (for rules that name a program or a command prefix). Must
   * never throw. Absent on analyzers that cannot list them: such rules then fail closed.
   */
  commands?(command: string): CommandList;
}

/** Step 4: the delegation guard of a child run; null when the call is inside the envelope. */
export interface DelegationGuard {
  check(tool: string, risk: ToolRisk, targets: readonly Target[]): Denial | null;
}
