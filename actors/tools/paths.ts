/**
 * Access to the decided targets and the execution-time path guard from a tool's context. Every
 * path a built-in tool touches comes from a decided target and is re-checked through
 * `policy/paths` right before use.
 */
import type { Target } from '../../policy/decision.ts';
import type { SnotraPathGuard } from '../../policy/paths/index.ts';
import type { PathGuard } from '../../policy/seams.ts';
import { ToolErrorCode } from './codes.ts';
import { ToolError, type ToolExecutionContext } from './types.ts';

/** Whether `guard` is the full path guard of `policy/paths` (needed for the execution helpers). */
export function isSnotraPathGuard(guard: PathGuard): guard is SnotraPathGuard {
  const g = guard as Partial<SnotraPathGuard>;
  return typeof g.canonicalize === 'function' && typeof g.flavor === 'object' && typeof g.fs === 'object';
}

/** The context's path guard, or `path_guard_unsupported` when it lacks the execution helpers. */
export function executionGuard(ctx: ToolExecutionContext): SnotraPathGuard {
  if (!isSnotraPathGuard(ctx.paths)) {
    throw new ToolError(
      ToolErrorCode.pathGuardUnsupported,
      'the path guard in the execution context cannot re-check paths at execution time',
    );
  }
  return ctx.paths;
}

/** The decided target of path argument `argument`, or `target_not_decided`. */
export function decidedTarget(ctx: ToolExecutionContext, argument: string): Target {
  const target = ctx.decision.targets.find((t) => t.argument === argument && t.resolved !== null);
  if (target === undefined) {
    throw new ToolError(
      ToolErrorCode.targetNotDecided,
      `the decision has no resolved target for argument "${argument}"`,
    );
  }
  return target;
}

/** A refusal of `policy/paths` as a `ToolError` carrying the policy's reason code and rule. */
export function refusalError(refusal: {
  readonly reason: string;
  readonly rule: { readonly id: string };
  readonly message: string;
}): ToolError {
  return new ToolError(refusal.reason, `refused at execution: ${refusal.message}`, {
    details: { rule: refusal.rule.id },
  });
}

/** Throws `cancelled` when the call's signal was aborted. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError(ToolErrorCode.cancelled, 'the call was cancelled');
}
