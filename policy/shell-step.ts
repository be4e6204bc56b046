import { posix } from 'node:path';
import type { ReasonCode, RuleRef, Target } from './decision.ts';
import type { PolicyContext } from './context.ts';
import type { CommandAnalysis, Denial, PathEffects } from './seams.ts';

/** Device files a command may write to without touching anything durable. */
const HARMLESS_WRITE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero']);

/** The sensitive-path rule of the runtime's own state dir (policy/paths/sensitive-defaults.ts). */
const RUNTIME_STATE_RULE = 'sensitive.runtime-state';
/** The runtime's own paths: the state dir and the config file. */
const RUNTIME_RULES: ReadonlySet<string> = new Set([RUNTIME_STATE_RULE, 'sensitive.runtime-config']);

/** The result of step 2 for a shell command. */
export type ShellStep2 =
  | { readonly kind: 'deny'; readonly denial: Denial }
  | {
      readonly kind: 'unanalyzable';
      readonly reason: ReasonCode;
      readonly rule: RuleRef;
      readonly analysis: CommandAnalysis;
    }
  | {
      readonly kind: 'ok';
      readonly analysis: CommandAnalysis & { kind: 'analyzed' };
      /** The links the command's link-following walks reach (each walked with the tree's access). */
      readonly links: LinksReached;
    };

/** The symlinks a command's link-following walks reach; `complete` false when not all are known. */
export interface LinksReached {
  readonly links: readonly { readonly path: string; readonly access: 'read' | 'write' }[];
  readonly complete: boolean;
  /** A filtered delete walks through the runtime's state dir (it may delete it): a human decides. */
  readonly reachesState?: boolean;
}

const NO_LINKS: LinksReached = { links: [], complete: true };

/** Why a shell command needs a human although nothing in it is denied. */
export interface ShellPending {
  readonly reason: ReasonCode;
  readonly rule: RuleRef;
  readonly step: number;
}

/**
 * The reason code of an analysis rule that needs a human: inline interpreter code, a path only
 * known at run time, else `unanalyzable_command`.
 */
export function shellReason(ruleId: string): ReasonCode {
  switch (ruleId) {
    case 'unanalyzable.inline-interpreter-code':
    case 'caution.interpreter-code':
    case 'caution.other-shell':
      return 'interpreter_code';
    case 'caution.dynamic-path':
    case 'caution.linked-path':
    case 'caution.dynamic-cwd':
    case 'caution.pipeline-targets':
      return 'dynamic_path';
    default:
      return 'unanalyzable_command';
  }
}

/**
 * A literal path of a command as the command sees it: relative paths are relative to the
 * command's working directory (itself relative to the primary root when relative).
 */
export function pathFromCwd(path: string, cwdInput: string | null): string {
  if (cwdInput === null || path.startsWith('/') || path.startsWith('~')) return path;
  return posix.join(cwdInput, path);
}

/** A literal path as a glob that matches only it. */
function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]]/g, '\\$&');
}

/** `pathFromCwd` for a glob: the cwd's own glob characters are escaped. */
function patternFromCwd(pattern: string, cwdInput: string | null): string {
  if (cwdInput === null) return pattern;
  return pathFromCwd(pattern, escapeGlob(cwdInput));
}

/**
 * Step 2 for `shell`: hardline rules (deny in every mode); literal paths, globs (as every path
 * they could match), arguments of programs without a table, and trees walked recursively that
 * are or hold sensitive host paths (deny; a recursive delete or chmod of a tree holding the
 * runtime's state dir is hardline); commands that cannot be analyzed (approval required even in
 * `allow`).
 */
export function shellStep2(command: string, cwdInput: string | null, ctx: PolicyContext): ShellStep2 {
  const analysis = ctx.shell.analyze(command);
  if (analysis.kind === 'unanalyzable') {
    // A denial anywhere in the command wins over the human an unanalyzable part needs.
    const denied = analysis.partial === undefined ? null : effectDenial(analysis.partial, cwdInput, ctx);
    if (denied !== null && 'reason' in denied) return { kind: 'deny', denial: denied };
    return {
      kind: 'unanalyzable',
      reason: shellReason(analysis.ruleId),
      rule: { id: analysis.ruleId, source: 'hardline' },
      analysis,
    };
  }
  if (analysis.hardline !== null) {
    return {
      kind: 'deny',
      denial: { reason: 'hardline_command', rule: { id: analysis.hardline.ruleId, source: 'hardline' } },
    };
  }
  const denied = effectDenial(analysis, cwdInput, ctx);
  if (denied === null) return { kind: 'ok', analysis, links: NO_LINKS };
  return 'reason' in denied ? { kind: 'deny', denial: denied } : { kind: 'ok', analysis, links: denied };
}

/**
 * The step-2 denial of a command's path effects: trees walked recursively that are or hold
 * sensitive paths (a recursive change of the runtime's state dir is hardline), sensitive reads,
 * sensitive or never-writable writes and probes, globs that could match either; a walk that
 * follows links counts every link it reaches as a tree of its own. Null when there is nothing to
 * deny and no link-following walk, else the links those walks reach.
 */
function effectDenial(
  effects: PathEffects,
  cwdInput: string | null,
  ctx: PolicyContext,
): Denial | LinksReached | null {
  // Trees that are changed first: a change of the state dir's tree is hardline, not just sensitive.
  const trees = [...effects.trees].sort((a, b) =>
    a.access === b.access ? 0 : a.access === 'write' ? -1 : 1,
  );
  let reachesState = false;
  for (const t of trees) {
    let d = ctx.paths.checkPattern?.(patternFromCwd(t.path, cwdInput), t.access, ctx.roots, true) ?? null;
    // Listing names of the runtime's own state is no leak (`find . -name '*.ts'` with the state dir inside).
    // Extracting into a tree that holds the state dir is not a recursive delete of it either.
    if ((t.names === true || t.fills === true) && d !== null && RUNTIME_RULES.has(d.rule.id)) d = null;
    // A filtered delete that walks through the state dir may delete it: a human decides, unless
    // the walk starts inside the state dir itself.
    if (
      t.filtered === true &&
      d !== null &&
      RUNTIME_RULES.has(d.rule.id) &&
      !startsInState(t.path, cwdInput, ctx)
    ) {
      reachesState = true;
      d = null;
    }
    if (d !== null && t.access === 'write' && d.rule.id === RUNTIME_STATE_RULE) {
      return {
        reason: 'hardline_command',
        rule: { id: 'hardline.recursive-runtime-state', source: 'hardline' },
      };
    }
    if (d) return d;
  }
  const walked = linkWalks(effects, cwdInput, ctx);
  if (walked !== null && 'reason' in walked) return walked;
  const reached = reachesState ? { ...(walked ?? NO_LINKS), reachesState } : walked;
  for (const p of effects.reads) {
    const d = ctx.paths.checkSensitive(pathFromCwd(p, cwdInput), 'read', ctx.roots);
    if (d) return d;
  }
  for (const p of [...effects.writes, ...effects.probes]) {
    if (HARMLESS_WRITE_TARGETS.has(p)) continue;
    const d = ctx.paths.checkSensitive(pathFromCwd(p, cwdInput), 'write', ctx.roots);
    if (d) return d;
  }
  for (const g of effects.globs) {
    const d =
      ctx.paths.checkPattern?.(patternFromCwd(g.pattern, cwdInput), g.access, ctx.roots, false) ?? null;
    if (d) return d;
  }
  return reached;
}

/** True when the walk at `path` starts at or inside the runtime's state dir or config. */
function startsInState(path: string, cwdInput: string | null, ctx: PolicyContext): boolean {
  const d = ctx.paths.checkSensitive(pathFromCwd(path, cwdInput), 'write', ctx.roots);
  return d !== null && RUNTIME_RULES.has(d.rule.id);
}

/**
 * The links reached by the walks of `effects` that follow links, each checked as a tree of the
 * walk's access (a denial stops the walk and is returned). Null when no walk follows links.
 */
function linkWalks(
  effects: PathEffects,
  cwdInput: string | null,
  ctx: PolicyContext,
): Denial | LinksReached | null {
  const follows = effects.trees.filter((t) => t.follow === true);
  if (follows.length === 0) return null;
  const paths = ctx.paths;
  if (paths.linksBeneath === undefined || paths.checkPattern === undefined)
    return { links: [], complete: false };
  const links: { path: string; access: 'read' | 'write' }[] = [];
  let complete = true;
  for (const t of follows) {
    let denial: Denial | null = null;
    const r = paths.linksBeneath(pathFromCwd(t.path, cwdInput), ctx.roots, (link) => {
      denial = paths.checkPattern?.(escapeGlob(link), t.access, ctx.roots, true) ?? null;
      return denial !== null;
    });
    if (denial !== null) return denial;
    complete &&= r.complete;
    for (const path of r.links) links.push({ path, access: t.access });
  }
  return { links, complete };
}

/**
 * Step 3 for `shell`: every literal path the command writes must lie in a `read-write` root; a
 * redirection into a read-only root or outside the roots is a write outside the roots, and so is
 * a link a changing walk follows (`chmod -R -L`) to a place outside them.
 * Appends resolved write targets to `targets`; returns the first denial.
 */
export function shellStep3(
  analysis: Pick<PathEffects, 'writes'>,
  cwdInput: string | null,
  ctx: PolicyContext,
  targets: Target[],
  reached: LinksReached = NO_LINKS,
): Denial | null {
  for (const p of analysis.writes) {
    if (HARMLESS_WRITE_TARGETS.has(p)) continue;
    const r = ctx.paths.resolve('command', pathFromCwd(p, cwdInput), 'write', ctx.roots);
    if (!r.ok) return r;
    targets.push(r.target);
  }
  for (const l of reached.links) {
    if (l.access !== 'write') continue;
    const r = ctx.paths.resolve('command', l.path, 'write', ctx.roots);
    if (!r.ok) return r;
  }
  return null;
}

/**
 * The fail-closed rule of `allow` mode for an analyzed shell command that nothing denied: it
 * runs without a human only when every effect is accounted for. Needs a human when the analysis
 * noted an effect it cannot follow (a run-time path, inline interpreter code, ...), when a path
 * it reads lies outside the roots, or when a path-looking argument of a program without a table
 * lies outside the read-write roots (or cannot be canonicalized). Null when nothing does.
 */
export function shellPending(
  analysis: CommandAnalysis & { kind: 'analyzed' },
  cwdInput: string | null,
  ctx: PolicyContext,
  reached: LinksReached = NO_LINKS,
): ShellPending | null {
  const c = analysis.caution;
  if (c !== null)
    return { reason: shellReason(c.ruleId), rule: { id: c.ruleId, source: 'hardline' }, step: 2 };
  if (reached.reachesState === true) {
    return {
      reason: 'unanalyzable_command',
      rule: { id: 'roots.walk-reaches-runtime-state', source: 'roots' },
      step: 2,
    };
  }
  if (!reached.complete) {
    // A walk that follows links could not be checked to its end: what it reaches is unknown.
    return {
      reason: 'unanalyzable_command',
      rule: { id: 'roots.link-walk-unchecked', source: 'roots' },
      step: 2,
    };
  }
  for (const l of reached.links) {
    const r = ctx.paths.resolve('command', l.path, 'read', ctx.roots);
    if (!r.ok)
      return { reason: 'read_outside_roots', rule: { id: 'roots.read-outside', source: 'roots' }, step: 3 };
  }
  if (analysis.trees.length + analysis.globs.length > 0 && ctx.paths.checkPattern === undefined) {
    return {
      reason: 'unanalyzable_command',
      rule: { id: 'roots.no-pattern-check', source: 'roots' },
      step: 2,
    };
  }
  for (const p of analysis.reads) {
    const r = ctx.paths.resolve('command', pathFromCwd(p, cwdInput), 'read', ctx.roots);
    if (!r.ok)
      return { reason: 'read_outside_roots', rule: { id: 'roots.read-outside', source: 'roots' }, step: 3 };
  }
  for (const p of analysis.probes) {
    const r = ctx.paths.resolve('command', pathFromCwd(p, cwdInput), 'write', ctx.roots);
    if (!r.ok) {
      return {
        reason: 'unknown_program_path',
        rule: { id: 'roots.unknown-program-path', source: 'roots' },
        step: 3,
      };
    }
  }
  return null;
}
