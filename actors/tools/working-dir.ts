/** The working directory of a process a tool starts: a decided path target, or the primary root. */
import * as fs from 'node:fs';
import { recheckAtExecution } from '../../policy/paths/index.ts';
import { ToolErrorCode } from './codes.ts';
import { executionGuard, refusalError } from './paths.ts';
import { ToolError, type ToolExecutionContext } from './types.ts';

/**
 * Re-checks the decided target of `argument` (for read access) when the call gave one,
 * otherwise resolves the current primary root through the guard; returns its canonical path.
 * Throws the policy's refusal, `no_primary_root`, or `not_a_directory`.
 */
export function workingDirectory(ctx: ToolExecutionContext, argument: string, given: boolean): string {
  const guard = executionGuard(ctx);
  let path: string;
  if (given) {
    const target = ctx.decision.targets.find((t) => t.argument === argument && t.resolved !== null);
    if (target === undefined) {
      throw new ToolError(
        ToolErrorCode.targetNotDecided,
        `the decision has no resolved target for "${argument}"`,
      );
    }
    const checked = recheckAtExecution(target, 'read', ctx.roots, guard);
    if (!checked.ok) throw refusalError(checked);
    path = checked.path;
  } else {
    const primary = ctx.roots.find((r) => r.primary);
    if (primary === undefined) throw new ToolError(ToolErrorCode.noPrimaryRoot, 'there is no primary root');
    const resolved = guard.resolve(argument, primary.path, 'read', ctx.roots);
    if (!resolved.ok) throw refusalError(resolved);
    path = resolved.canonical.path;
  }
  if (fs.statSync(path, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new ToolError(ToolErrorCode.notADirectory, 'the working directory is not a directory');
  }
  return path;
}
