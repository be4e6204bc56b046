import type { ReasonCode } from '../../policy/decision.ts';
import { approvalIdFor } from '../../machines/run/machine.ts';
import type { RunContext } from '../../machines/run/types.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { DecideResult, Store } from '../../store/index.ts';
import type { ApprovalService } from './approval-service.ts';
import { grantOptions } from './grant-options.ts';

/** A grant a human may give with an approval: for the rest of the session, or always for the exact target. */
export type GrantScope = 'session' | 'standing';

/** Raised when a grant was asked for that the request is not eligible for. */
export class GrantNotEligibleError extends Error {
  readonly code = 'grant_not_eligible';
}

/** What approving with a grant needs from the runtime. */
export interface ApproveWithGrantDeps {
  readonly store: Store;
  readonly registry: ToolRegistry;
  readonly approvals: ApprovalService;
  /** The run's context now (live or stored), for the call as the run holds it. */
  readonly contextOf: (runId: string) => RunContext | null;
  readonly clock: () => number;
}

/**
 * Approves a pending request and, in the same durable transaction, grants what the human chose:
 * a session approval (`session`) or a standing approval for the exact target owned by the run's
 * task (`standing`). Eligibility and targets come from the tool's metadata and the call as the
 * run holds it (grant-options.ts), never from the surface; an ineligible scope throws
 * GrantNotEligibleError and decides nothing. A request that is no longer pending grants
 * nothing and returns the store's verdict (`already_decided`, `expired`, `not_found`).
 */
export function approveWithGrant(
  deps: ApproveWithGrantDeps,
  approvalId: string,
  scope: GrantScope,
  user: string,
): DecideResult {
  const approval = deps.store.approvals.get(approvalId);
  if (approval === null || approval.status !== 'pending')
    return deps.approvals.decide(approvalId, 'approved', user);
  if (approval.kind === 'budget')
    throw new GrantNotEligibleError(
      `approval ${approvalId}: a budget request extends its run once; it cannot be approved ` +
        (scope === 'session' ? 'for the session' : 'always'),
    );
  const runId = approval.runId;
  const ctx = runId === null ? null : deps.contextOf(runId);
  const call = runId === null ? undefined : ctx?.calls.find((c) => approvalIdFor(runId, c.id) === approvalId);
  const decision =
    call !== undefined && ctx?.decision
      ? ctx.decision
      : { reason: approval.reason as ReasonCode, targets: [] };
  const options = grantOptions(
    deps.registry,
    approval.tool,
    call?.args ?? approval.args,
    decision,
    approval.taskId,
  );
  const chosen = options[scope];
  if (chosen === null) {
    throw new GrantNotEligibleError(
      `approval ${approvalId}: ${approval.tool} (${approval.risk}, ${approval.reason}) cannot be approved ` +
        (scope === 'session' ? 'for the session' : 'always for its target'),
    );
  }
  const result = deps.store.transaction(
    () => {
      const r = deps.store.approvals.decide(approvalId, 'approved', user, deps.clock());
      if (!r.ok) return r;
      if (scope === 'session') {
        deps.store.sessionApprovals.grant({
          sessionId: approval.sessionId,
          tool: approval.tool,
          target: chosen.target,
          grantedBy: user,
          agentId: approval.agentId,
          runId: approval.runId,
        });
      } else if (approval.taskId !== null && chosen.target !== null) {
        deps.store.standingApprovals.grant({
          ownerTaskId: approval.taskId,
          tool: approval.tool,
          target: chosen.target,
          grantedBy: user,
        });
      }
      return r;
    },
    { durable: true },
  );
  deps.approvals.sync(approvalId);
  return result;
}
