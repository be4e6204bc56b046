import { argsHash } from '../../policy/provenance/args-hash.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Store } from '../../store/index.ts';
import type { ExecuteInput } from '../../machines/run/types.ts';

/** The reason code of a call refused because what is about to run is not what was approved. */
export const APPROVAL_ARGS_MISMATCH = 'approval_args_mismatch';

/** What the model is told about such a call (no hash, no argument value). */
export const APPROVAL_ARGS_MISMATCH_MESSAGE =
  'this call was not run: its arguments are not the ones a human approved (they changed after the approval); propose it again if it is still needed';

/** What binds a call about to run: the approval (or standing grant) and the hash of its arguments. */
export type Binding =
  | {
      readonly ok: true;
      /** The hash of the arguments about to run (null when the call needed no human). */
      readonly argsHash: string | null;
      readonly approvalId?: string;
      readonly standingApprovalId?: string;
    }
  | { readonly ok: false; readonly detail: Readonly<Record<string, unknown>> };

/**
 * Checks that the call about to run is exactly what a human approved. A call that needed an
 * approval runs only when its approval is `approved` and the SHA-256 of its RFC 8785-canonical
 * arguments equals the one bound when the approval was requested (a run resumed from a snapshot
 * edited after the approval fails here). A call allowed by a standing approval runs only when its
 * target argument is still that grant's exact target. Approvals stored before binding existed
 * (record version 1, no hash) are honoured as they were given. Anything else is refused.
 */
export function checkBinding(
  input: ExecuteInput,
  deps: { readonly store: Store; readonly registry: ToolRegistry },
): Binding {
  const { call, decision, runId } = input;
  if (decision.decision === 'approval-required') {
    const approval = deps.store.approvals.getByCall(`${runId}:${call.id}`);
    const actual = argsHash(call.args);
    if (approval === null || approval.status !== 'approved') {
      return {
        ok: false,
        detail: { cause: 'no_approval', approvalId: approval?.id ?? null, status: approval?.status ?? null },
      };
    }
    if (approval.argsHash === null && approval.v < 2)
      return { ok: true, argsHash: actual, approvalId: approval.id };
    if (actual === null || approval.argsHash !== actual) {
      return {
        ok: false,
        detail: {
          cause: 'args_hash',
          approvalId: approval.id,
          approvedHash: approval.argsHash,
          actualHash: actual,
        },
      };
    }
    return { ok: true, argsHash: actual, approvalId: approval.id };
  }
  if (decision.rule.source === 'standing-approval') {
    const grant = deps.store.standingApprovals.get(decision.rule.id);
    const tool = deps.registry.get(call.tool);
    const name = tool?.status === 'ok' ? tool.metadata.targetArgument : undefined;
    const args = call.args as Record<string, unknown> | null;
    const target = name !== undefined && typeof args === 'object' && args !== null ? args[name] : undefined;
    if (grant === null || grant.tool !== call.tool || typeof target !== 'string' || target !== grant.target) {
      return {
        ok: false,
        detail: {
          cause: 'standing_target',
          standingApprovalId: decision.rule.id,
          grantedTarget: grant?.target ?? null,
          actualTarget: typeof target === 'string' ? target : null,
        },
      };
    }
    return { ok: true, argsHash: argsHash(call.args), standingApprovalId: grant.id };
  }
  return { ok: true, argsHash: null };
}
