import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ApprovalDecision, ApprovalRecord, DecideResult, RunStatus, Store } from '../../store/index.ts';
import type { RunContext } from '../../machines/run/types.ts';
import type { DecisionGate } from '../approvals/approval-service.ts';
import { subjectPattern, Wildcard, type BusLogger } from '../bus/index.ts';
import { AGENT_STREAM } from '../agent-queue.ts';
import { openBuckets, type ClusterBuckets } from './buckets.ts';
import { ClusterClaims } from './claims.ts';
import { checkClusterServer, type ServerFacts } from './feature-check.ts';
import { approvalOf, ClusterInbox, InboxRecord } from './inbox.ts';
import { decodeEntry } from './kv.ts';
import { NodeLease, nodeAlive } from './leases.ts';
import { withRetry } from './retry.ts';
import { RunRecord, RunRecords, TERMINAL_STATUSES } from './run-records.ts';
import { WorkQueue, type WorkItem, type WorkVerdict } from './work-queue.ts';

/** What a cluster node needs from the runtime it serves (the runtime's own public parts). */
export interface ClusterRuntimeView {
  readonly store: Store;
  readonly runs: {
    isLive(runId: string): boolean;
    restore(runId: string): boolean;
    park(runId: string): void;
  };
  readonly approvals: { track(approval: ApprovalRecord): void };
}

/** Options of {@link ClusterNode.start}. */
export interface ClusterNodeOptions {
  readonly nc: NatsConnection;
  readonly nodeId: string;
  readonly store: Store;
  readonly clock: () => number;
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

/** An item retried while the run's owner finishes parking gives up after this many deliveries. */
const MAX_WAIT_DELIVERIES = 60;

const idOfKey = (key: string): string | null => {
  if (!key.startsWith('k')) return null;
  try {
    return Buffer.from(key.slice(1), 'base64url').toString('utf8');
  } catch {
    return null;
  }
};

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
 */
export class ClusterNode {
  readonly claims: ClusterClaims;
  readonly inbox: ClusterInbox;
  readonly records: RunRecords;
  /** Approvals being delivered by this node's resume of a run (the gate lets exactly these through). */
  readonly #delivering = new Set<string>();
  readonly #mirrors = new Map<string, { revision: number | null; chain: Promise<void>; fenced: boolean }>();
  /** Non-terminal runs by id, as the run records say (kept by a watch). */
  readonly #index = new Map<
    string,
    { owner: string; status: RunStatus; revision: number; published: boolean }
  >();
  /** Pending approvals and their deadlines (kept by a watch). */
  readonly #pending = new Map<string, { expiresAt: number; runId: string | null }>();
  readonly #restorable = new Set<string>();
  /** The approval each run of this node waits on, carried in its record (a node that dies before publishing it loses nothing). */
  readonly #opened = new Map<string, ApprovalRecord>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #watches: { stop(): void }[] = [];
  #rt: ClusterRuntimeView | null = null;
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
    private readonly clock: () => number,
    private readonly logger: BusLogger,
    private readonly leaseTtlMs: number,
    claimTimeoutMs: number,
  ) {
    this.claims = new ClusterClaims(
      buckets.claims,
      nodeId,
      clock,
      logger,
      claimTimeoutMs,
      () => this.#stopping,
    );
    this.inbox = new ClusterInbox(buckets.inbox, nodeId);
    this.records = new RunRecords(buckets.runs);
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
    const until = Date.now() + 30_000;
    const queue = await withRetry(
      () => WorkQueue.open(options.nc, { replicas, ackWaitMs: options.ackWaitMs ?? 30_000 }, options.logger),
      until,
    );
    await withRetry(() => replicateAgentStream(options.nc, replicas), until);
    let onLost: () => void = () => {};
    const lease = new NodeLease(
      buckets.nodes,
      options.nodeId,
      leaseTtlMs,
      options.clock,
      options.logger,
      () => onLost(),
    );
    await lease.acquire();
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
    await node.#reconcileLocalRuns();
    return node;
  }

  /** The gate of this node's approval service: no local expiry, delivery only through a resume. */
  readonly gate: DecisionGate = {
    mayExpire: () => false,
    mayDeliver: (approval) => {
      if (this.#delivering.has(approval.id)) return true;
      // Resolved in this node's store by a local surface (the CLI, `Runtime.decide`): carry it
      // to the shared Inbox; the run resumes through the work queue like any other decision.
      if (approval.status === 'approved' || approval.status === 'denied')
        void this.#carryLocalDecision(approval);
      return false;
    },
  };

  /** Whether boot may restore a run of the local store (only one this node still owns). */
  mayRestore(runId: string): boolean {
    return this.#restorable.has(runId);
  }

  /** Starts the watches, the failover check, the expiry of approvals and the resume consumer. */
  async attach(rt: ClusterRuntimeView): Promise<void> {
    this.#rt = rt;
    this.#watches.push(await this.#watch(this.buckets.runs.kv, (e) => this.#onRunEntry(e)));
    this.#watches.push(await this.#watch(this.buckets.inbox.kv, (e) => this.#onInboxEntry(e)));
    const tick = Math.max(100, Math.floor(this.leaseTtlMs / 2));
    const t1 = setInterval(() => void this.#failoverCheck(), tick);
    const t2 = setInterval(() => void this.#expireDue(), Math.min(1000, tick));
    t1.unref();
    t2.unref();
    this.#timers.push(t1, t2);
    await this.queue.consume((item, deliveries) => this.#process(item, deliveries));
  }

  /** A run's status changed in this node's store: mirror its record (in order, per run). */
  runStatus(runId: string, status: RunStatus): void {
    void status;
    this.#mirror(runId);
  }

  /** An approval was opened here: mirror the parked run, then publish the request to the shared Inbox. */
  approvalOpened(approval: ApprovalRecord): Promise<void> {
    if (approval.runId !== null) this.#opened.set(approval.runId, approval);
    const chain = this.#mirror(approval.runId ?? '');
    return chain
      .then(async () => {
        const stored = await withRetry(
          () => this.inbox.open(approval),
          this.clock() + 30_000,
          () => this.#stopping,
        );
        // Opened again by a replay after a take-over, and decided meanwhile: resume it.
        if (stored.value.status !== 'pending' && approval.runId !== null)
          await this.#enqueue(approval.runId, 'decision', `decision:${approval.id}:${this.nodeId}`);
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
    const now = this.clock();
    const result = await withRetry(
      () => this.inbox.decide(id, decision, user, now, reason),
      now + 30_000,
      () => this.#stopping,
    );
    const runId = result.approval?.runId ?? null;
    if (runId !== null && (result.ok || result.reason === 'expired'))
      await this.#enqueue(runId, 'decision', `decision:${id}`);
    this.logger.debug({ approvalId: id, ok: result.ok }, 'cluster: decision recorded');
    return result;
  }

  /** Stops taking resume items (before the runtime parks its live runs). */
  async stopWork(): Promise<void> {
    this.#workStopped = true;
    for (const t of this.#timers.splice(0)) clearInterval(t);
    for (const w of this.#watches.splice(0)) w.stop();
    await this.queue.stop();
  }

  /** Mirrors what is pending and releases the lease (after the runtime parked its live runs). */
  async close(): Promise<void> {
    if (!this.#workStopped) await this.stopWork();
    for (const runId of this.store.snapshots.list().map((r) => r.runId)) {
      if (this.#mirrors.has(runId)) this.#mirror(runId);
    }
    // Bounded: a cluster that cannot be reached does not hold the stop (the records lag; the
    // next owner replays from the last one written).
    const flushed = Promise.all([...this.#mirrors.values()].map((m) => m.chain));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([flushed, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
    this.#stopping = true;
    await this.lease.release();
  }

  async #watch(kv: KV, on: (e: KvWatchEntry) => void): Promise<{ stop(): void }> {
    const it = await kv.watch();
    void (async () => {
      for await (const e of it) {
        try {
          on(e);
        } catch (err) {
          this.logger.warn({ err: (err as Error).message }, 'cluster: a watched entry was not understood');
        }
      }
    })().catch((err: unknown) => {
      if (!this.#workStopped) this.logger.error({ err: (err as Error).message }, 'cluster: a watch ended');
    });
    return { stop: () => it.stop() };
  }

  #onRunEntry(e: KvWatchEntry): void {
    const runId = idOfKey(e.key);
    if (runId === null) return;
    const rec = decodeEntry(e, RunRecord, `run record ${JSON.stringify(runId)}`);
    if (rec === null || TERMINAL_STATUSES.has(rec.value.status)) this.#index.delete(runId);
    else {
      this.#index.set(runId, {
        owner: rec.value.owner,
        status: rec.value.status,
        revision: rec.revision,
        published: rec.value.approval !== null,
      });
    }
  }

  #onInboxEntry(e: KvWatchEntry): void {
    const id = idOfKey(e.key);
    if (id === null) return;
    const rec = decodeEntry(e, InboxRecord, `inbox record ${JSON.stringify(id)}`);
    if (rec === null || rec.value.status !== 'pending') this.#pending.delete(id);
    else this.#pending.set(id, { expiresAt: rec.value.approval.expiresAt, runId: rec.value.approval.runId });
  }

  async #reconcileLocalRuns(): Promise<void> {
    for (const run of this.store.snapshots.list()) {
      if (TERMINAL_STATUSES.has(run.status)) continue;
      const found = await this.records.get(run.runId);
      if (found === null) {
        // Never mirrored (this node died before the first write landed): it is ours.
        this.#restorable.add(run.runId);
        continue;
      }
      if (found.value.owner !== this.nodeId || TERMINAL_STATUSES.has(found.value.status)) continue;
      // Fence any in-flight failover of it: the record's revision moves on.
      const rev = await this.records.update({ ...found.value, updatedAt: this.clock() }, found.revision);
      if (rev === null) continue;
      this.#mirrors.set(run.runId, { revision: rev, chain: Promise.resolve(), fenced: false });
      this.#restorable.add(run.runId);
    }
  }

  #mirror(runId: string): Promise<void> {
    let m = this.#mirrors.get(runId);
    if (m === undefined) {
      m = { revision: null, chain: Promise.resolve(), fenced: false };
      this.#mirrors.set(runId, m);
    }
    const state = m;
    const chain: Promise<void> = state.chain
      .then(() =>
        withRetry(
          () => this.#writeRecord(runId, state),
          this.clock() + 30_000,
          () => this.#stopping,
        ),
      )
      .then(
        // Written: a run that ended needs nothing more here (the map would otherwise grow with
        // every run a long-lived node ever ran). Not when a later write was queued meanwhile.
        () => {
          if (state.chain === chain) this.#forgetIfEnded(runId, state);
        },
        (err: unknown) =>
          this.logger.error({ runId, err: (err as Error).message }, 'cluster: run record not written'),
      );
    state.chain = chain;
    return chain;
  }

  #forgetIfEnded(runId: string, state: object): void {
    if (this.#mirrors.get(runId) !== state) return;
    const status = this.store.snapshots.get(runId)?.status;
    if (status === undefined || !TERMINAL_STATUSES.has(status)) return;
    this.#mirrors.delete(runId);
    this.#opened.delete(runId);
    this.#restorable.delete(runId);
  }

  /** How many runs and approvals this node keeps track of (bounded by what is not over). */
  stats(): { readonly trackedRuns: number; readonly openedApprovals: number; readonly pending: number } {
    return {
      trackedRuns: this.#mirrors.size,
      openedApprovals: this.#opened.size,
      pending: this.#pending.size,
    };
  }

  async #writeRecord(runId: string, m: { revision: number | null; fenced: boolean }): Promise<void> {
    if (m.fenced) return;
    const local = this.store.snapshots.get(runId);
    if (local === null) return;
    const ctx = (local.snapshot as { context?: RunContext }).context;
    const record: RunRecord = {
      v: 1,
      runId,
      owner: this.nodeId,
      status: local.status,
      approvalId: local.status === 'waiting_for_approval' ? (ctx?.approvalId ?? null) : null,
      approval:
        local.status === 'waiting_for_approval' && this.#opened.get(runId)?.id === ctx?.approvalId
          ? (this.#opened.get(runId) ?? null)
          : null,
      envelope: local,
      updatedAt: this.clock(),
    };
    if (m.revision === null) {
      const rev = await this.records.create(record);
      if (rev !== null) {
        m.revision = rev;
        return;
      }
      const found = await this.records.get(runId);
      if (found === null) throw new Error('the run record vanished');
      if (found.value.owner !== this.nodeId) return this.#fence(runId, m, found.value.owner);
      m.revision = found.revision;
    }
    const rev = await this.records.update(record, m.revision);
    if (rev !== null) {
      m.revision = rev;
      return;
    }
    const found = await this.records.get(runId);
    if (found !== null && found.value.owner === this.nodeId) {
      // Our own write whose reply was lost: write again at the revision it made.
      m.revision = found.revision;
      const again = await this.records.update(record, found.revision);
      if (again !== null) {
        m.revision = again;
        return;
      }
    }
    this.#fence(runId, m, found?.value.owner ?? 'unknown');
  }

  /** Another node owns the run now: stop it here (its work continues there). */
  #fence(runId: string, m: { fenced: boolean }, owner: string): void {
    m.fenced = true;
    this.logger.warn({ runId, owner }, 'cluster: run taken over by another node; stopped here');
    if (this.#rt?.runs.isLive(runId) === true) this.#rt.runs.park(runId);
  }

  async #enqueue(runId: string, why: WorkItem['why'], dedupId: string): Promise<void> {
    await withRetry(
      () => this.queue.publish({ v: 1, runId, why, at: this.clock() }, dedupId),
      this.clock() + 30_000,
      () => this.#stopping,
    );
  }

  async #failoverCheck(): Promise<void> {
    if (this.#workStopped || this.lease.lost) return;
    const alive = new Map<string, boolean>();
    for (const [runId, r] of this.#index) {
      if (r.owner === this.nodeId) continue;
      // A parked run needs a node only if its request may not have reached the shared Inbox.
      if (r.status === 'waiting_for_approval' && r.published) continue;
      let ok = alive.get(r.owner);
      if (ok === undefined) {
        ok = await nodeAlive(this.buckets.nodes, r.owner).catch(() => true);
        alive.set(r.owner, ok);
      }
      if (!ok) {
        await this.#enqueue(runId, 'failover', `failover:${runId}:${r.revision}`).catch((err: unknown) =>
          this.logger.warn({ runId, err: (err as Error).message }, 'cluster: failover not queued'),
        );
      }
    }
  }

  async #expireDue(): Promise<void> {
    if (this.#workStopped) return;
    const now = this.clock();
    for (const [id, p] of this.#pending) {
      if (p.expiresAt > now) continue;
      try {
        const after = await this.inbox.expire(id, now);
        if (after?.status === 'expired' && after.decidedOn === this.nodeId && p.runId !== null)
          await this.#enqueue(p.runId, 'decision', `decision:${id}`);
      } catch (err) {
        this.logger.warn({ approvalId: id, err: (err as Error).message }, 'cluster: approval expiry failed');
      }
    }
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

  /** One resume item: see the class doc. */
  async #process(item: WorkItem, deliveries: number): Promise<WorkVerdict> {
    const rt = this.#rt;
    if (rt === null || this.#workStopped || this.lease.lost) return { nakMs: 1000 };
    const wait = (): WorkVerdict => (deliveries >= MAX_WAIT_DELIVERIES ? { ack: true } : { nakMs: 250 });
    const found = await this.records.get(item.runId);
    if (found === null) return wait();
    const rec = found.value;
    if (TERMINAL_STATUSES.has(rec.status)) return { ack: true };
    let approval: ApprovalRecord | null = null;
    if (rec.status === 'waiting_for_approval') {
      if (rec.approvalId === null) return wait();
      let entry = await this.inbox.get(rec.approvalId);
      // Its node died before publishing the request: publish it from the record.
      if (entry === null && rec.approval !== null && rec.approval.id === rec.approvalId)
        entry = await this.inbox.open(rec.approval);
      if (entry === null) {
        // Not even in the record: only restoring the run on a live node opens it again.
        if (rec.owner === this.nodeId || (await nodeAlive(this.buckets.nodes, rec.owner))) return wait();
      } else if (entry.value.status === 'pending') {
        // A decision's item read before the decision reached this replica (a leader just
        // moved): read again shortly; any other item is queued again by its decision.
        return item.why === 'decision' ? wait() : { ack: true };
      } else {
        approval = approvalOf(entry.value);
      }
    } else if (rec.owner !== this.nodeId) {
      if (await nodeAlive(this.buckets.nodes, rec.owner))
        return item.why === 'decision' ? wait() : { ack: true };
    } else if (rt.runs.isLive(item.runId)) {
      return { ack: true };
    }
    // Take the run over: exactly one node's CAS on this revision wins.
    const taken: RunRecord = { ...rec, owner: this.nodeId, updatedAt: this.clock() };
    const rev = await this.records.update(taken, found.revision);
    if (rev === null) return { nakMs: 0 };
    this.#mirrors.set(item.runId, { revision: rev, chain: Promise.resolve(), fenced: false });
    this.logger.info(
      { runId: item.runId, from: rec.owner, why: item.why, status: rec.status },
      'cluster: run taken over',
    );
    if (!rt.runs.isLive(item.runId)) {
      this.store.snapshots.importEnvelope(rec.envelope, `cluster run record ${JSON.stringify(item.runId)}`);
    }
    if (approval !== null) this.#deliver(rt, approval);
    else rt.runs.restore(item.runId);
    // Hold the item (in-progress acks) while the run executes here; done once it parks or ends.
    const holdUntil =
      rec.status === 'waiting_for_approval' && approval === null ? this.clock() + 60_000 : Infinity;
    while (rt.runs.isLive(item.runId) && !this.#workStopped && this.clock() < holdUntil)
      await new Promise((r) => setTimeout(r, 50));
    if (this.#workStopped) return { nakMs: 0 };
    await this.#mirrors.get(item.runId)?.chain;
    return { ack: true };
  }

  /** Brings a decided approval into this node's store and delivers it to the run here. */
  #deliver(rt: ClusterRuntimeView, approval: ApprovalRecord): void {
    const store = this.store;
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
      );
    } else if (approval.status === 'expired') {
      store.approvals.expireDue(approval.expiresAt);
    }
    const local = store.approvals.get(approval.id);
    if (local === null) return;
    this.#delivering.add(approval.id);
    try {
      rt.approvals.track(local);
    } finally {
      this.#delivering.delete(approval.id);
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
    await jsm.streams.add({
      name: AGENT_STREAM,
      subjects: [subjectPattern('agent', Wildcard.One, 'message')],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      max_msg_size: 1024 * 1024,
      duplicate_window: 120_000 * 1_000_000,
      num_replicas: replicas,
    });
  } catch (err) {
    await jsm.streams.info(AGENT_STREAM).catch(() => {
      throw err;
    });
  }
}
