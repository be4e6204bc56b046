import type { ApprovalRecord, Store } from '../../store/index.ts';
import { storedContext } from '../runs/stored-run.ts';
import type { BusLogger } from '../bus/index.ts';
import { retryDeadline, withRetry } from './retry.ts';
import { type RunRecord, type RunRecords, TERMINAL_STATUSES } from './run-records.ts';
import type { ClusterRuntimeView } from './runtime-view.ts';

/** What {@link RunMirror} needs from the node it serves. */
export interface RunMirrorDeps {
  readonly nodeId: string;
  readonly store: Store;
  readonly records: RunRecords;
  readonly clock: () => number;
  readonly logger: BusLogger;
  /** The runtime, once attached. */
  readonly rt: () => ClusterRuntimeView | null;
  /** Whether the node is past its last flush (retries give up). */
  readonly stopping: () => boolean;
}

interface MirrorState {
  revision: number | null;
  chain: Promise<void>;
  fenced: boolean;
}

/**
 * Mirrors this node's local run snapshots to the shared run records (DESIGN.md §9), in order per
 * run, CAS on revision: the owner field is the fence, and a run another node took over is stopped
 * here. Also decides at boot which local runs this node may restore.
 */
export class RunMirror {
  readonly #mirrors = new Map<string, MirrorState>();
  readonly #restorable = new Set<string>();
  /** The approval each run of this node waits on, carried in its record (a node that dies before publishing it loses nothing). */
  readonly #opened = new Map<string, ApprovalRecord>();

  constructor(private readonly deps: RunMirrorDeps) {}

  /** Whether boot may restore a run of the local store (only one this node still owns). */
  mayRestore(runId: string): boolean {
    return this.#restorable.has(runId);
  }

  /** The approval a run of this node now waits on (carried in its next record). */
  opened(approval: ApprovalRecord): void {
    if (approval.runId !== null) this.#opened.set(approval.runId, approval);
  }

  /** This node took the run over at `revision`: later writes go on from there. */
  adopt(runId: string, revision: number): void {
    this.#mirrors.set(runId, { revision, chain: Promise.resolve(), fenced: false });
  }

  /** Resolves once the writes queued so far for the run are done. */
  async settled(runId: string): Promise<void> {
    await this.#mirrors.get(runId)?.chain;
  }

  get trackedRuns(): number {
    return this.#mirrors.size;
  }

  get openedApprovals(): number {
    return this.#opened.size;
  }

  /** Mirrors every tracked run once more and waits for all writes, at most `boundMs`. */
  async flush(boundMs: number): Promise<void> {
    for (const runId of this.deps.store.snapshots.list().map((r) => r.runId)) {
      if (this.#mirrors.has(runId)) this.mirror(runId);
    }
    // Bounded: a cluster that cannot be reached does not hold the stop (the records lag; the
    // next owner replays from the last one written).
    const flushed = Promise.all([...this.#mirrors.values()].map((m) => m.chain));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([flushed, new Promise((r) => (timer = setTimeout(r, boundMs)))]);
    clearTimeout(timer);
  }

  async reconcileLocalRuns(): Promise<void> {
    const { store, records, nodeId, clock } = this.deps;
    for (const run of store.snapshots.listUnfinished()) {
      const found = await records.get(run.runId);
      if (found === null) {
        // Never mirrored (this node died before the first write landed): it is ours.
        this.#restorable.add(run.runId);
        continue;
      }
      if (found.value.owner !== nodeId || TERMINAL_STATUSES.has(found.value.status)) continue;
      // Fence any in-flight failover of it: the record's revision moves on.
      const rev = await records.update({ ...found.value, updatedAt: clock() }, found.revision);
      if (rev === null) continue;
      this.#mirrors.set(run.runId, { revision: rev, chain: Promise.resolve(), fenced: false });
      this.#restorable.add(run.runId);
    }
  }

  mirror(runId: string): Promise<void> {
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
          retryDeadline(30_000),
          () => this.deps.stopping(),
        ),
      )
      .then(
        // Written: a run that ended needs nothing more here (the map would otherwise grow with
        // every run a long-lived node ever ran). Not when a later write was queued meanwhile.
        () => {
          if (state.chain === chain) this.#forgetIfEnded(runId, state);
        },
        (err: unknown) =>
          this.deps.logger.error({ runId, err: (err as Error).message }, 'cluster: run record not written'),
      );
    state.chain = chain;
    return chain;
  }

  #forgetIfEnded(runId: string, state: object): void {
    if (this.#mirrors.get(runId) !== state) return;
    const status = this.deps.store.snapshots.get(runId)?.status;
    if (status === undefined || !TERMINAL_STATUSES.has(status)) return;
    this.#mirrors.delete(runId);
    this.#opened.delete(runId);
    this.#restorable.delete(runId);
  }

  async #writeRecord(runId: string, m: { revision: number | null; fenced: boolean }): Promise<void> {
    if (m.fenced) return;
    const { store, records, nodeId, clock } = this.deps;
    let local = store.snapshots.get(runId);
    // A run just started: its first state commits with the store's next transaction or at the
    // end of the turn; its record is written from that.
    if (local === null && (await this.deps.rt()?.runs.stored(runId)) === true)
      local = store.snapshots.get(runId);
    if (local === null) return;
    const ctx = storedContext(local);
    const trace = store.runTraces.get(runId);
    const record: RunRecord = {
      v: 1,
      runId,
      owner: nodeId,
      status: local.status,
      approvalId: local.status === 'waiting_for_approval' ? (ctx?.approvalId ?? null) : null,
      approval:
        local.status === 'waiting_for_approval' && this.#opened.get(runId)?.id === ctx?.approvalId
          ? (this.#opened.get(runId) ?? null)
          : null,
      envelope: local,
      ...(trace !== null ? { trace: { traceparent: trace.traceparent, attrs: { ...trace.attrs } } } : {}),
      updatedAt: clock(),
    };
    if (m.revision === null) {
      const rev = await records.create(record);
      if (rev !== null) {
        m.revision = rev;
        return;
      }
      const found = await records.get(runId);
      if (found === null) throw new Error('the run record vanished');
      if (found.value.owner !== nodeId) return this.#fence(runId, m, found.value.owner);
      m.revision = found.revision;
    }
    const rev = await records.update(record, m.revision);
    if (rev !== null) {
      m.revision = rev;
      return;
    }
    const found = await records.get(runId);
    if (found !== null && found.value.owner === nodeId) {
      // Our own write whose reply was lost: write again at the revision it made.
      m.revision = found.revision;
      const again = await records.update(record, found.revision);
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
    this.deps.logger.warn({ runId, owner }, 'cluster: run taken over by another node; stopped here');
    const rt = this.deps.rt();
    if (rt?.runs.isLive(runId) === true) rt.runs.park(runId);
  }
}
