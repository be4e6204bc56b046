import { posix } from 'node:path';
import type { RuleRef, Target } from './decision.ts';
import type { PolicyContext } from './context.ts';
import type { CommandAnalysis, Denial } from './seams.ts';

/** Device files a command may write to without touching anything durable. */
const HARMLESS_WRITE_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/zero']);

/** The result of step 2 for a shell command. */
export type ShellStep2 =
  | { readonly kind: 'deny'; readonly denial: Denial }
  | { readonly kind: 'unanalyzable'; readonly rule: RuleRef; readonly analysis: CommandAnalysis }
  | { readonly kind: 'ok'; readonly analysis: CommandAnalysis & { kind: 'analyzed' } };

/**
 * A literal path of a command as the command sees it: relative paths are relative to the
 * command's working directory (itself relative to the primary root when relative).
 */
export function pathFromCwd(path: string, cwdInput: string | null): string {
  if (cwdInput === null || path.startsWith('/') || path.startsWith('~')) return path;
  return posix.join(cwdInput, path);
}

/**
 * Step 2 for `shell`: hardline rules (deny in every mode), literal paths that are sensitive
 * host paths (deny), and commands that cannot be analyzed (approval required even in `allow`).
 */
export function shellStep2(command: string, cwdInput: string | null, ctx: PolicyContext): ShellStep2 {
  const analysis = ctx.shell.analyze(command);
  if (analysis.kind === 'unanalyzable') {
    return { kind: 'unanalyzable', rule: { id: analysis.ruleId, source: 'hardline' }, analysis };
  }
  if (analysis.hardline !== null) {
    return {
      kind: 'deny',
      denial: { reason: 'hardline_command', rule: { id: analysis.hardline.ruleId, source: 'hardline' } },
    };
  }
  for (const p of analysis.reads) {
    const d = ctx.paths.checkSensitive(pathFromCwd(p, cwdInput), 'read', ctx.roots);
    if (d) return { kind: 'deny', denial: d };
  }
  for (const p of analysis.writes) {
    if (HARMLESS_WRITE_TARGETS.has(p)) continue;
    const d = ctx.paths.checkSensitive(pathFromCwd(p, cwdInput), 'write', ctx.roots);
    if (d) return { kind: 'deny', denial: d };
  }
  return { kind: 'ok', analysis };
}

/**
 * Step 3 for `shell`: every literal path the command writes must lie in a `read-write` root; a
 * redirection into a read-only root or outside the roots is a write outside the roots.
 * Appends resolved write targets to `targets`; returns the first denial.
 */
export function shellStep3(
  analysis: CommandAnalysis & { kind: 'analyzed' },
  cwdInput: string | null,
  ctx: PolicyContext,
  targets: Target[],
): Denial | null {
  for (const p of analysis.writes) {
    if (HARMLESS_WRITE_TARGETS.has(p)) continue;
    const r = ctx.paths.resolve('command', pathFromCwd(p, cwdInput), 'write', ctx.roots);
    if (!r.ok) return r;
    targets.push(r.target);
  }
  return null;
}
