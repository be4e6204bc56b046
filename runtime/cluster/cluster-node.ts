import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ApprovalDecision, ApprovalRecord, DecideResult, RunStatus, Store } from '../../store/index.ts';
import type { DecisionGate } from '../approvals/approval-service.ts';
import type { BusLogger } from '../bus/index.ts';
import { AGENT_STREAM, agentStreamConfig } from '../agent-queue.ts';
import { openBuckets, type ClusterBuckets } from './buckets.ts';
import { ClusterClaims } from './claims.ts';
import { Failover } from './failover.ts';
import { ClusterFollower, type ClusterApproval } from './follower.ts';
import { checkClusterServer, type ServerFacts } from './feature-check.ts';
import { ClusterInbox } from './inbox.ts';
import { NodeLease, nodeAlive } from './leases.ts';
import { ResumeWorker } from './resume-worker.ts';
import { retryDeadline, withRetry } from './retry.ts';
import { RunMirror } from './run-mirror.ts';
import { RunRecords } from './run-records.ts';
import type { ClusterRuntimeView } from './runtime-view.ts';
import { WorkQueue } from './work-queue.ts';
import type { Clock } from '../time/clock.ts';

export type { ClusterRuntimeView } from './runtime-view.ts';

/** Options of {@link ClusterNode.start}. */
export interface ClusterNodeOptions {
  readonly nc: NatsConnection;
  readonly nodeId: string;
  readonly store: Store;
  /** The runtime's clock: approval deadlines are armed on it, records stamped with its time. */
  readonly clock: Clock;
  readonly logger: BusLogger;
  /** Replicas of every bucket and stream. Default 3. */
  readonly replicas?: number;
  /** A node not heard from for this long counts as dead. Default 10 000 ms. */
  readonly leaseTtlMs?: number;
  /** A resume item held this long without an in-progress ack goes to another node. Default 30 000 ms. */
  readonly ackWaitMs?: number;
  /** How long a claim waits for a quorum before the call is refused. Default 30 000 ms. */
  readonly claimTimeoutMs?: number;
}

/**
 * One runtime node of a cluster (DESIGN.md §9): the shared state every node must see lives in
 * JetStream — run records with snapshots (CAS on revision, the owner field is the fence), the
 * Inbox (a decision is a CAS from `pending`), claims of calls, node leases — and a work queue
 * carries runs to resume. SQLite stays this node's cache and its own audit trail.
 *
 * Flow: a run this node starts is mirrored to its record at each status change. A decision
 * (through any node) is a CAS in the Inbox plus a resume item; whichever node takes the item
 * takes the run over by CAS, imports its snapshot and the decided approval into its store and
 * delivers the decision there, holding the item with in-progress acks until the run parks or
 * ends. A node whose lease lapsed has its running runs queued for failover: another node takes
 * them over and restores them; a call the dead node had claimed is reused or reported
 * interrupted, never run twice.
 *
 * The parts: `run-mirror.ts` writes the records, `resume-worker.ts` takes the resume items,
 * `failover.ts` watches for dead owners and overdue approvals, `follower.ts` brings what was
 * decided, ended or taken over elsewhere into this node's store, feed and audit chain and keeps
 * the cluster's pending approvals (the cluster-wide Inbox); this class composes them.
 */
export class ClusterNode {
  readonly claims: ClusterClaims;
  readonly inbox: ClusterInbox;
  readonly records: RunRecords;
  readonly #mirror: RunMirror;
  readonly #worker: ResumeWorker;
  readonly #failover: Failover;
  readonly #follower: ClusterFollower;
  #rt: ClusterRuntimeView | null = null;
  /** Resolutions this node wrote before the runtime was attached (a decision carried at boot). */
  readonly #unannounced: ApprovalRecord[] = [];
  #stopping = false;
  #workStopped = false;

  private constructor(
    readonly nodeId: string,
    readonly server: ServerFacts,
    private readonly nc: NatsConnection,
    private readonly buckets: ClusterBuckets,
    private readonly queue: WorkQueue,
    private readonly lease: NodeLease,
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: BusLogger,
    private readonly leaseTtlMs: number,
    claimTimeoutMs: number,
  ) {
    // Only the failover's approval expiry arms timers on the runtime's clock; the rest stamps time.
    const now = (): number => clock.now();
    this.claims = new ClusterClaims(
      buckets.claims,
      nodeId,
      now,
      logger,
      claimTimeoutMs,
      () => this.#stopping,
    );
    this.inbox = new ClusterInbox(buckets.inbox, nodeId, store.redactor, (a) => this.#announce(a));
    this.records = new RunRecords(buckets.runs, store.redactor);
    const rt = (): ClusterRuntimeView | null => this.#rt;
    const stopping = (): boolean => this.#stopping;
    const workStopped = (): boolean => this.#workStopped;
    this.#mirror = new RunMirror({ nodeId, store, records: this.records, clock: now, logger, rt, stopping });
    this.#worker = new ResumeWorker({
      nodeId,
      store,
      records: this.records,
      inbox: this.inbox,
      nodes: buckets.nodes,
      queue,
      mirror: this.#mirror,
      clock: now,
      logger,
      rt,
      idle: () => this.#workStopped || this.lease.lost,
      workStopped,
      stopping,
    });
    this.#follower = new ClusterFollower({
      nodeId,
      store,
      logger,
      rt,
    });
    this.#failover = new Failover({
      onRun: (runId, rec) => this.#follower.run(runId, rec),
      onInbox: (id, rec) => this.#follower.inbox(id, rec),
      nodeId,
      buckets,
      inbox: this.inbox,
      clock,
      logger,
      enqueue: (runId, why, dedupId) => this.#worker.enqueue(runId, why, dedupId),
      workStopped,
      leaseLost: () => this.lease.lost,
    });
  }

  /**
   * Checks the server, opens the buckets and the work queue, takes this node's lease and decides
   * which of the runs in the local store this node may restore (those whose record it still owns;
   * a run another node took over meanwhile stays with that node).
   */
  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    const replicas = options.replicas ?? 3;
    const leaseTtlMs = options.leaseTtlMs ?? 10_000;
    const server = await checkClusterServer(options.nc, 'bus.url');
    const buckets = await openBuckets(options.nc, { replicas, leaseTtlMs });
    // The id first: a second live runtime with this id is refused before anything else is opened.
    let onLost: () => void = () => {};
    const lease = new NodeLease(
      buckets.nodes,
      options.nodeId,
      leaseTtlMs,
      () => options.clock.now(),
      options.logger,
      () => onLost(),
    );
    await lease.acquire();
    const until = retryDeadline(30_000);
    let queue: WorkQueue;
    try {
      queue = await withRetry(
        () =>
          WorkQueue.open(options.nc, { replicas, ackWaitMs: options.ackWaitMs ?? 30_000 }, options.logger),
        until,
      );
      await withRetry(() => replicateAgentStream(options.nc, replicas), until);
    } catch (err) {
      await lease.release();
      throw err;
    }
    const node = new ClusterNode(
      options.nodeId,
      server,
      options.nc,
      buckets,
      queue,
      lease,
      options.store,
      options.clock,
      options.logger,
      leaseTtlMs,
      options.claimTimeoutMs ?? 30_000,
    );
    onLost = () => void node.stopWork().catch(() => {});
    await node.#mirror.reconcileLocalRuns();
    return node;
  }

  /** The gate of this node's approval service: no local expiry, delivery only through a resume. */
  readonly gate: DecisionGate = {
    mayExpire: () => false,
    mayDeliver: (approval) => {
      if (this.#worker.isDelivering(approval.id)) return true;
      // Learned from the shared Inbox: its run resumes through a resume item, like any decision.
      if (this.#follower.isLearning(approval.id)) return false;
      // Resolved in this node's store by a local surface (the CLI, `Runtime.decide`): carry it
      // to the shared Inbox; the run resumes through the work queue like any other decision.
      if (approval.status === 'approved' || approval.status === 'denied')
        void this.#carryLocalDecision(approval);
      return false;
    },
  };

  /** The cluster's Inbox: every pending approval of every node, with the node that parked it. */
  pendingApprovals(): ClusterApproval[] {
    return this.#follower.pending();
  }

  /** Calls `listener` after the cluster's pending approvals changed; returns its removal. */
  onInboxChange(listener: () => void): () => void {
    return this.#follower.onChange(listener);
  }

  /** Whether boot may restore a run of the local store (only one this node still owns). */
  mayRestore(runId: string): boolean {
    return this.#mirror.mayRestore(runId);
  }

  /** Starts the watches, the failover check, the expiry of approvals and the resume consumer. */
  async attach(rt: ClusterRuntimeView): Promise<void> {
    this.#rt = rt;
    for (const a of this.#unannounced.splice(0)) this.#announce(a);
    await this.#failover.start(Math.max(100, Math.floor(this.leaseTtlMs / 2)));
    await this.queue.consume((item, deliveries, trace) => this.#worker.process(item, deliveries, trace));
  }

  /** A run's status changed in this node's store: mirror its record (in order, per run). */
  runStatus(runId: string, status: RunStatus): void {
    void status;
    this.#mirror.mirror(runId);
  }

  /** An approval was opened here: mirror the parked run, then publish the request to the shared Inbox. */
  approvalOpened(approval: ApprovalRecord): Promise<void> {
    this.#mirror.opened(approval);
    const chain = this.#mirror.mirror(approval.runId ?? '');
    return chain
      .then(async () => {
        const stored = await withRetry(
          () => this.inbox.open(approval),
          retryDeadline(30_000),
          () => this.#stopping,
        );
        // Opened again by a replay after a take-over, and decided meanwhile: resume it.
        if (stored.value.status !== 'pending' && approval.runId !== null)
          await this.#worker.enqueue(approval.runId, 'decision', `decision:${approval.id}:${this.nodeId}`);
      })
      .catch((err: unknown) =>
        this.logger.error(
          { approvalId: approval.id, err: (err as Error).message },
          'cluster: approval not published',
        ),
      );
  }

  /**
   * A human decision through this node: single use across the cluster (a CAS in the shared
   * Inbox). The run resumes once, on whichever node takes its resume item.
   */
  async decide(id: string, decision: ApprovalDecision, user: string, reason?: string): Promise<DecideResult> {
    // Retried through a lost quorum (a server of the cluster died and leaders are re-elected);
    // a write whose reply was lost is recognised as this decision, not as someone else's.
    const now = this.clock.now();
    // A refused input is not retried.
    this.inbox.checkDecision(id, decision, user, now, reason);
    const result = await withRetry(
      () => this.inbox.decide(id, decision, user, now, reason),
      retryDeadline(30_000),
      () => this.#stopping,
    );
    if (result.ok) this.#auditDecision(result.approval, user, reason);
    const runId = result.approval?.runId ?? null;
    if (runId !== null && (result.ok || result.reason === 'expired'))
      await this.#worker.enqueue(runId, 'decision', `decision:${id}`);
    this.logger.debug({ approvalId: id, ok: result.ok }, 'cluster: decision recorded');
    return result;
  }

  /**
   * A decision made through this node for an approval parked on another: audited in this node's
   * chain (the one whose store holds the request follows it from the shared Inbox).
   */
  #auditDecision(approval: ApprovalRecord, user: string, reason: string | undefined): void {
    if (this.store.approvals.get(approval.id) !== null) return;
    try {
      this.store.audit.append({
        runId: approval.runId,
        callId: approval.callId,
        agentId: approval.agentId,
        sessionId: approval.sessionId,
        tool: approval.tool,
        risk: approval.risk,
        ruleId: approval.ruleId,
        status: approval.status,
        kind: 'approval_resolved',
        detail: {
          approvalId: approval.id,
          decidedBy: user,
          ...(reason === undefined ? {} : { decisionReason: reason }),
          through: this.nodeId,
        },
      });
    } catch (err) {
      this.logger.error(
        { approvalId: approval.id, err: (err as Error).message },
        'cluster: decision not audited here',
      );
    }
  }

  /**
   * A decision or expiry this node wrote to the shared Inbox goes out on the bus from here
   * (`approval.resolved`, with the run's trace context, from its shared record when this node has
   * none): once, whether or not the node that parked the run still runs.
   */
  #announce(approval: ApprovalRecord): void {
    const rt = this.#rt;
    if (rt === null) {
      this.#unannounced.push(approval);
      return;
    }
    const runId = approval.runId;
    void (runId === null ? Promise.resolve(null) : this.#worker.traceOf(runId))
      .catch(() => null)
      .then((trace) => rt.approvalResolvedOnBus(approval, trace))
      .catch((err: unknown) =>
        this.logger.warn(
          { approvalId: approval.id, err: (err as Error).message },
          'cluster: approval.resolved not published',
        ),
      );
  }

  /** Stops taking resume items (before the runtime parks its live runs). */
  async stopWork(): Promise<void> {
    this.#workStopped = true;
    this.#failover.stop();
    await this.queue.stop();
  }

  /** Mirrors what is pending and releases the lease (after the runtime parked its live runs). */
  async close(): Promise<void> {
    if (!this.#workStopped) await this.stopWork();
    await this.#mirror.flush(5000);
    this.#stopping = true;
    await this.lease.release();
  }

  /** How many runs and approvals this node keeps track of (bounded by what is not over). */
  stats(): { readonly trackedRuns: number; readonly openedApprovals: number; readonly pending: number } {
    return {
      trackedRuns: this.#mirror.trackedRuns,
      openedApprovals: this.#mirror.openedApprovals,
      pending: this.#failover.pendingCount,
    };
  }

  async #carryLocalDecision(approval: ApprovalRecord): Promise<void> {
    try {
      const result = await this.decide(
        approval.id,
        approval.status as ApprovalDecision,
        approval.decidedBy ?? 'unknown',
        approval.decisionReason ?? undefined,
      );
      if (!result.ok) {
        this.logger.warn(
          { approvalId: approval.id, reason: result.reason },
          'cluster: a decision made in this node store lost to the shared Inbox; the shared one applies',
        );
      }
    } catch (err) {
      this.logger.error(
        { approvalId: approval.id, err: (err as Error).message },
        'cluster: local decision not carried',
      );
    }
  }

  /** Whether a node holds a live lease (for tests and `snotra dev-cluster`). */
  alive(nodeId: string): Promise<boolean> {
    return nodeAlive(this.buckets.nodes, nodeId);
  }

  /** The connection this node uses (the runtime's bus connection). */
  get connection(): NatsConnection {
    return this.nc;
  }
}

/**
 * Creates the agent message stream with `replicas` copies before the runtime's agent queue opens
 * it (the queue binds to an existing stream), so agent messages survive the loss of a server.
 */
async function replicateAgentStream(nc: NatsConnection, replicas: number): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(AGENT_STREAM);
    return;
  } catch {
    // not there yet
  }
  try {
    await jsm.streams.add(agentStreamConfig(replicas));
  } catch (err) {
    await jsm.streams.info(AGENT_STREAM).catch(() => {
      throw err;
    });
  }
}
