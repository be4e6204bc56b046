import type { RunContext, RunOutcome } from '../../machines/run/types.ts';
import type { ApprovalRecord, Store } from '../../store/index.ts';
import type { TraceContextValues } from '../bus/index.ts';

/** What a cluster node needs from the runtime it serves (the runtime's own public parts). */
export interface ClusterRuntimeView {
  readonly store: Store;
  readonly runs: {
    isLive(runId: string): boolean;
    restore(runId: string): boolean;
    park(runId: string): void;
    /** Resolves once a started run's first state is committed (true), or false when it never is. */
    stored(runId: string): Promise<boolean>;
  };
  readonly approvals: {
    track(approval: ApprovalRecord): void;
    /** Picks up a resolution written to the store (reported on the feed and the bus). */
    sync(approvalId: string): void;
  };
  /**
   * Publishes `approval.resolved` on the bus for a resolution this node wrote to the shared
   * Inbox, with the run's trace context: the runtime's own, else `trace` (its shared record's).
   */
  readonly approvalResolvedOnBus: (approval: ApprovalRecord, trace: TraceContextValues | null) => void;
  /** The live feed of run events (a run that ended on another node is reported here too). */
  readonly feed: {
    ended(ctx: RunContext, outcome: RunOutcome): void;
    /** A decision brought in with a run taken over (this node never tracked its request). */
    approvalResolved(approval: ApprovalRecord): void;
  };
}
