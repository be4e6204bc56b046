import type { ApprovalRecord } from '../../store/index.ts';
import type { TraceContextValues } from '../bus/index.ts';
import { storedContext } from '../runs/stored-run.ts';
import type { ClusterBuckets } from './buckets.ts';
import { approvalOf, type ClusterInbox } from './inbox.ts';
import { nodeAlive } from './leases.ts';
import { retryDeadline, withRetry } from './retry.ts';
import { type RunRecord, TERMINAL_STATUSES } from './run-records.ts';
import type { RunMirror, RunMirrorDeps } from './run-mirror.ts';
import type { ClusterRuntimeView } from './runtime-view.ts';
import type { WorkItem, WorkQueue, WorkVerdict } from './work-queue.ts';

/** An item retried while the run's owner finishes parking gives up after this many deliveries. */
const MAX_WAIT_DELIVERIES = 60;

/** What {@link ResumeWorker} needs from the node it serves (besides what the mirror needs). */
export interface ResumeWorkerDeps extends RunMirrorDeps {
  readonly inbox: ClusterInbox;
  readonly nodes: ClusterBuckets['nodes'];
  readonly queue: WorkQueue;
  readonly mirror: RunMirror;
  /** Whether this node takes no more work (stopped, or its lease is lost). */
  readonly idle: () => boolean;
  /** Whether the node stopped taking resume items (a held item is given back). */
  readonly workStopped: () => boolean;
}

/**
 * The resume work items of the cluster (DESIGN.md §9): queues them, and takes one by taking its
 * run over (CAS on the record's revision), importing its snapshot and the decided approval into
 * this node's store and delivering the decision to the runtime here, holding the item with
 * in-progress acks until the run parks or ends.
 */
export class ResumeWorker {
  /** Approvals being delivered by this node's resume of a run (the gate lets exactly these through). */
  readonly #delivering = new Set<string>();

  constructor(private readonly deps: ResumeWorkerDeps) {}

  /** Whether the approval is being delivered by a resume here. */
  isDelivering(approvalId: string): boolean {
    return this.#delivering.has(approvalId);
  }

  async enqueue(runId: string, why: WorkItem['why'], dedupId: string): Promise<void> {
    const { queue, clock } = this.deps;
    const trace = await this.traceOf(runId);
    await withRetry(
      () => queue.publish({ v: 1, runId, why, at: clock() }, dedupId, trace),
      retryDeadline(30_000),
      () => this.deps.stopping(),
    );
  }

  /** The run's trace context for its item's headers: this node's, else its shared record's. */
  async traceOf(runId: string): Promise<TraceContextValues | null> {
    const local = this.deps.store.runTraces.get(runId);
    if (local !== null) return { traceparent: local.traceparent };
    const found = await this.deps.records.get(runId).catch(() => null);
    return found?.value.trace !== undefined ? { traceparent: found.value.trace.traceparent } : null;
  }

  /** One resume item (`trace`: its headers' trace context): see the class doc of ClusterNode. */
  async process(
    item: WorkItem,
    deliveries: number,
    trace: TraceContextValues | null = null,
  ): Promise<WorkVerdict> {
    const { records, inbox, nodes, nodeId, clock, logger, store, mirror } = this.deps;
    const rt = this.deps.rt();
    if (rt === null || this.deps.idle()) return { nakMs: 1000 };
    const wait = (): WorkVerdict => (deliveries >= MAX_WAIT_DELIVERIES ? { ack: true } : { nakMs: 250 });
    const found = await records.get(item.runId);
    if (found === null) return wait();
    const rec = found.value;
    if (TERMINAL_STATUSES.has(rec.status)) return { ack: true };
    let approval: (ApprovalRecord & { readonly decidedOn: string | null }) | null = null;
    if (rec.status === 'waiting_for_approval') {
      if (rec.approvalId === null) return wait();
      let entry = await inbox.get(rec.approvalId);
      // Its node died before publishing the request: publish it from the record.
      if (entry === null && rec.approval !== null && rec.approval.id === rec.approvalId)
        entry = await inbox.open(rec.approval, rec.owner);
      if (entry === null) {
        // Not even in the record: only restoring the run on a live node opens it again.
        if (rec.owner === nodeId || (await nodeAlive(nodes, rec.owner))) return wait();
      } else if (entry.value.status === 'pending') {
        // A decision's item read before the decision reached this replica (a leader just
        // moved): read again shortly; any other item is queued again by its decision.
        return item.why === 'decision' ? wait() : { ack: true };
      } else {
        approval = { ...approvalOf(entry.value), decidedOn: entry.value.decidedOn };
      }
    } else if (rec.owner !== nodeId) {
      if (await nodeAlive(nodes, rec.owner)) return item.why === 'decision' ? wait() : { ack: true };
    } else if (rt.runs.isLive(item.runId)) {
      return { ack: true };
    }
    // Take the run over: exactly one node's CAS on this revision wins.
    const taken: RunRecord = { ...rec, owner: nodeId, updatedAt: clock() };
    const rev = await records.update(taken, found.revision);
    if (rev === null) return { nakMs: 0 };
    mirror.adopt(item.runId, rev);
    this.#continueTrace(item.runId, rec, trace);
    logger.info(
      { runId: item.runId, from: rec.owner, why: item.why, status: rec.status },
      'cluster: run taken over',
    );
    const envelope = rec.envelope as { agentId?: unknown } | null;
    store.audit.append({
      runId: item.runId,
      ...(typeof envelope?.agentId === 'string' ? { agentId: envelope.agentId } : {}),
      kind: 'run_taken_over',
      status: rec.status,
      detail: { from: rec.owner, why: item.why, approvalId: approval?.id ?? null },
    });
    if (!rt.runs.isLive(item.runId)) {
      const imported = store.snapshots.importEnvelope(
        rec.envelope,
        `cluster run record ${JSON.stringify(item.runId)}`,
      );
      // Taken over past its approval (its node died running the approved call): the decided
      // approval comes from the shared Inbox into this store, where the executor checks that the
      // arguments it runs are the ones approved (an id from the record only looks it up).
      const approvedId = approval === null ? (storedContext(imported)?.approvalId ?? null) : null;
      if (approvedId !== null && store.approvals.get(approvedId) === null) {
        const entry = await inbox.get(approvedId);
        if (entry !== null && entry.value.status !== 'pending')
          this.#bringIn({ ...approvalOf(entry.value), decidedOn: entry.value.decidedOn });
      }
    }
    if (approval !== null) this.#deliver(rt, approval);
    else rt.runs.restore(item.runId);
    // Hold the item (in-progress acks) while the run executes here; done once it parks or ends.
    const holdUntil =
      rec.status === 'waiting_for_approval' && approval === null ? clock() + 60_000 : Infinity;
    while (rt.runs.isLive(item.runId) && !this.deps.workStopped() && clock() < holdUntil)
      await new Promise((r) => setTimeout(r, 50));
    if (this.deps.workStopped()) return { nakMs: 0 };
    await mirror.settled(item.runId);
    return { ack: true };
  }

  /**
   * A run taken over continues the trace it began in: its context (from its record, else from
   * the item's headers) is stored here before the run is restored, where telemetry finds it.
   */
  #continueTrace(runId: string, rec: RunRecord, header: TraceContextValues | null): void {
    const { store } = this.deps;
    if (store.runTraces.get(runId) !== null) return;
    if (rec.trace !== undefined) store.runTraces.put(runId, rec.trace.traceparent, rec.trace.attrs);
    else if (header !== null) store.runTraces.put(runId, header.traceparent, {});
  }

  /** Brings a decided approval into this node's store and delivers it to the run here. */
  #deliver(rt: ClusterRuntimeView, approval: ApprovalRecord & { readonly decidedOn?: string | null }): void {
    const store = this.deps.store;
    const fresh = store.approvals.get(approval.id) === null;
    this.#bringIn(approval);
    const local = store.approvals.get(approval.id);
    if (local === null) return;
    // Its request was opened on another node: this node's feed hears the decision here (the
    // approval wait's span, the surfaces), as the node that tracked the request would have.
    if (fresh && local.status !== 'pending') rt.feed.approvalResolved(local);
    this.#delivering.add(approval.id);
    try {
      rt.approvals.track(local);
    } finally {
      this.#delivering.delete(approval.id);
    }
  }

  /** A decided approval of the shared Inbox into this node's store (as decided there), once. */
  #bringIn(approval: ApprovalRecord & { readonly decidedOn?: string | null }): void {
    const store = this.deps.store;
    if (store.approvals.get(approval.id) === null) {
      store.approvals.create({
        id: approval.id,
        callId: approval.callId,
        runId: approval.runId,
        sessionId: approval.sessionId,
        taskId: approval.taskId,
        agentId: approval.agentId,
        parentAgentId: approval.parentAgentId,
        parentRunId: approval.parentRunId,
        surface: approval.surface,
        tool: approval.tool,
        args: approval.args,
        target: approval.target,
        risk: approval.risk,
        reason: approval.reason,
        ruleId: approval.ruleId,
        idempotencyKey: approval.idempotencyKey,
        ...(approval.argsHash ? { argsHash: approval.argsHash } : {}),
        ...(approval.policyHash ? { policyHash: approval.policyHash } : {}),
        resumeCheckpoint: approval.resumeCheckpoint ?? undefined,
        createdAt: approval.createdAt,
        expiresAt: approval.expiresAt,
      });
    }
    if (approval.status === 'approved' || approval.status === 'denied') {
      store.approvals.decide(
        approval.id,
        approval.status,
        approval.decidedBy ?? 'unknown',
        Math.min(approval.decidedAt ?? approval.createdAt, approval.expiresAt - 1),
        approval.decisionReason ?? undefined,
        approval.decidedOn ?? undefined,
      );
    } else if (approval.status === 'expired') {
      store.approvals.expireDue(approval.expiresAt);
    }
  }
}
