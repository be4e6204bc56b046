import { standingApprovalEligible } from '../../policy/approvals.ts';
import type { Decision } from '../../policy/decision.ts';
import type { ToolRegistry } from '../../policy/registry.ts';

/** The grants a human may give instead of a one-time approval, with the exact target each binds. */
export interface GrantOptions {
  /** "For this session": null when not offered; `target` null means every target of the tool. */
  readonly session: { readonly target: string | null } | null;
  /** "Always for this exact target" (a standing approval owned by the run's task): null when not offered. */
  readonly standing: { readonly target: string } | null;
}

const NONE: GrantOptions = { session: null, standing: null };

/**
 * Which grants an approval request may turn into, derived from the tool's validated metadata
 * (never from what a surface or the model says). A session grant is never offered for a tool
 * without valid metadata, an always-ask tool or an unanalyzable command, and for exec tools only
 * for the exact command; a standing grant only for `external` tools with a target argument
 * (invariant 7), in a run that belongs to a task. The targets are the ones the policy matches.
 */
export function grantOptions(
  registry: ToolRegistry,
  tool: string,
  args: unknown,
  decision: Pick<Decision, 'reason' | 'targets'>,
  taskId: string | null,
): GrantOptions {
  const resolved = registry.get(tool);
  if (resolved?.status !== 'ok') return NONE;
  const meta = resolved.metadata;
  const a = (args ?? {}) as Record<string, unknown>;
  let session: GrantOptions['session'] = null;
  if (meta.alwaysAsk !== true && decision.reason !== 'unanalyzable_command') {
    if (meta.risk !== 'exec') session = { target: null };
    else if (tool === 'shell' && typeof a.command === 'string') session = { target: a.command };
  }
  let standing: GrantOptions['standing'] = null;
  if (taskId !== null && standingApprovalEligible(meta) && meta.targetArgument !== undefined) {
    const value = a[meta.targetArgument];
    if (typeof value === 'string' && value.length > 0) standing = { target: value };
  }
  return { session, standing };
}
