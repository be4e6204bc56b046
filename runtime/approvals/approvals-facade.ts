import type { ToolRegistry } from '../../policy/registry.ts';
import type { ApprovalDecision, DecideResult, Store } from '../../store/index.ts';
import type { ClusterNode } from '../cluster/index.ts';
import type { RunHost } from '../runs/run-host.ts';
import type { Clock } from '../time/clock.ts';
import type { ApprovalService } from './approval-service.ts';
import { approveWithGrant, type GrantScope } from './approve-with-grant.ts';
import { refuseLocalDecisionInCluster } from './cluster-refusal.ts';

/** What {@link ApprovalsFacade} hands its calls to. */
export interface ApprovalsFacadeDeps {
  readonly cluster: ClusterNode | null;
  readonly approvals: ApprovalService;
  readonly store: Store;
  readonly registry: ToolRegistry;
  readonly runs: RunHost;
  readonly clock: Clock;
}

/**
 * `runtime.approvals`: how the surfaces decide (the synchronous embedding call,
 * `runtime.decide`, stays on the Runtime).
 */
export class ApprovalsFacade {
  readonly #deps: ApprovalsFacadeDeps;

  constructor(deps: ApprovalsFacadeDeps) {
    this.#deps = deps;
  }

  /**
   * `runtime.decide` that resolves once the decision is on stable storage; decisions made at the
   * same time share one fsync (group commit). The surfaces (sidecar) decide through it. Cluster
   * mode: single use across nodes (a CAS in the shared Inbox), whichever node was asked.
   */
  decideAsync(
    approvalId: string,
    decision: ApprovalDecision,
    user: string,
    reason?: string,
  ): Promise<DecideResult> {
    const { cluster, approvals } = this.#deps;
    if (cluster !== null) return cluster.decide(approvalId, decision, user, reason);
    return approvals.decideAsync(approvalId, decision, user, reason);
  }

  /**
   * Approves a pending request and, in the same transaction, grants a session approval or a
   * standing approval for the exact target (approve-with-grant.ts); an ineligible scope throws
   * GrantNotEligibleError and decides nothing.
   */
  approveWithGrant(approvalId: string, scope: GrantScope, user: string): DecideResult {
    const { cluster, store, registry, approvals, runs, clock } = this.#deps;
    refuseLocalDecisionInCluster(cluster, 'approveWithGrant');
    const deps = {
      store,
      registry,
      approvals,
      contextOf: (id: string) => runs.contextOf(id),
      clock: () => clock.now(),
    };
    return approveWithGrant(deps, approvalId, scope, user);
  }
}
