import type { RunStatus, Store } from '../../store/index.ts';
import type { SettledEffect } from '../../actors/run/effects.ts';
import { statusOf, type RunActor, type RunSnapshot } from './run-status.ts';
import { withSettled } from './snapshot-repair.ts';

/**
 * Writes run snapshots behind the run actors: coalesced to one transaction at the end of each
 * event-loop turn, joined to the store's next transaction when the run's next commits depend on
 * them, written at once when the run rests, and told when a started run's first state is stored.
 */
export class WriteBehind {
  /** Runs whose coalesced snapshot write is due at the end of this event-loop turn (see `schedule`). */
  readonly #scheduled = new Map<string, RunActor>();
  /**
   * Those of them whose write must also join the next transaction the store opens, if it comes
   * first: a first state, a model answer (what the run's next commits depend on), each as it was
   * when it became due (see `capture`).
   */
  readonly #joins = new Map<string, Captured>();
  #flushScheduled = false;
  /** Runs written inside the store's open transaction: stored once it commits, due again if anything in it rolls back. */
  readonly #inTx = new Map<string, Captured>();
  /** Started runs whose first state is not committed yet, with who waits for it (see `stored`). */
  readonly #unstored = new Map<string, Array<(stored: boolean) => void>>();
  /** Set while due writes join a transaction (a write's own savepoint asks for them again). */
  #joining = false;
  #stopping = false;

  constructor(
    private readonly store: Store,
    /** The live actor of a run, if any: only a run's live actor is written. */
    private readonly live: (runId: string) => RunActor | undefined,
  ) {
    store.joinEachCommit({
      write: () => this.#writeDue(),
      undone: () => this.#undone(),
      ended: (committed) => this.#ended(committed),
    });
  }

  /** A new run is starting: `stored` waits for its first state to commit. */
  expectFirst(runId: string): void {
    this.#unstored.set(runId, []);
  }

  /**
   * Resolves true once a run is in the store (a started run's first state committed; at once
   * for one already stored), false when it is neither stored nor live (or the host stopped
   * before its first write).
   */
  stored(runId: string): Promise<boolean> {
    const waiting = this.#unstored.get(runId);
    if (waiting === undefined)
      return Promise.resolve(this.live(runId) !== undefined || this.store.snapshots.has(runId));
    return new Promise((resolve) => waiting.push(resolve));
  }

  /** A live run took state `s` after resting in `last` (null for its first state): written at once or made due. */
  stepped(runId: string, actor: RunActor, s: RunSnapshot, last: RunStatus | null): void {
    if (persistAtOnce(last, statusOf(s), s)) this.persist(runId, s, actor);
    else this.schedule(runId, actor, last === null);
  }

  /**
   * Coalesces a run's snapshot write to the end of the event-loop turn, where every run's write
   * due then is one transaction (one commit for all the runs in flight, not one each). With
   * `joins`, the write also joins the next transaction the store opens if that comes first (see
   * `#writeDue`); the run's later steps in the turn are coalesced again. Only what the run's next
   * commits depend on joins: every commit carrying every run's latest step would write a run
   * once per commit of the turn instead of once per turn.
   */
  schedule(runId: string, actor: RunActor, joins = false): void {
    this.#scheduled.set(runId, actor);
    if (joins) this.#joins.set(runId, capture(actor));
    this.#armFlush();
  }

  /**
   * Writes a live run's current state now, inside the caller's transaction when one is open. With
   * `settled`, written as it will be once that effect has returned (see `withSettled`).
   */
  persistCurrent(runId: string, actor: RunActor, settled?: SettledEffect): void {
    if (settled === undefined) return this.persist(runId, actor.getSnapshot(), actor);
    this.#joins.delete(runId);
    const now = capture(actor);
    this.#write(runId, { ...now, persisted: withSettled(now.persisted, settled) });
  }

  /** Writes a run's state now (outside any transition of it: see `capture`); an older due join is superseded. */
  persist(runId: string, s: RunSnapshot, actor: RunActor): void {
    if (this.#stopping && this.live(runId) === undefined) return;
    this.#joins.delete(runId);
    this.#write(runId, s === actor.getSnapshot() ? capture(actor) : { ...capture(actor), snapshot: s });
  }

  /** The host is stopping: a run no longer live is not written again. */
  stop(): void {
    this.#stopping = true;
  }

  /** After the last write at stop: whoever waits for a first state is told whether it is stored. */
  releaseWaiters(): void {
    for (const runId of [...this.#unstored.keys()]) this.#committed(runId, this.store.snapshots.has(runId));
  }

  #armFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const due = [...this.#scheduled].filter(([id, a]) => this.live(id) === a);
      this.#scheduled.clear();
      this.#joins.clear();
      // A later turn of the event loop, where nothing can catch: a store closed meanwhile (a
      // test's simulated crash; a runtime stops its runs before its store) is left alone.
      if (due.length === 0 || !this.store.open) return;
      const write = () => {
        for (const [id, a] of due) this.persist(id, a.getSnapshot(), a);
      };
      if (due.length === 1) write();
      else this.store.transaction(write);
    });
  }

  /**
   * Inside a transaction the store opened, before it commits (or a savepoint begins): writes
   * the due states that join (a first state, a model answer) in it, so nothing committed depends
   * on an answer the stored run does not have (the audit of a call, its approval or ledger row
   * commit with the answer that proposed it, or after). A write that fails here is left due for
   * the end of the turn, where it fails on its own instead of rolling back the transaction it
   * joined.
   */
  #writeDue(): void {
    if (this.#joining || this.#joins.size === 0) return;
    this.#joining = true;
    try {
      const due = [...this.#joins];
      this.#joins.clear();
      for (const [id, c] of due) {
        const a = c.actor;
        if (this.#scheduled.get(id) !== a || this.live(id) !== a) continue;
        // A later step of the run is still due at the end of the turn.
        if (a.getSnapshot() === c.snapshot) this.#scheduled.delete(id);
        try {
          this.#write(id, c);
        } catch {
          this.#scheduled.set(id, a);
          this.#armFlush();
        }
      }
    } finally {
      this.#joining = false;
    }
  }

  /** Something in the open transaction rolled back: what was written in it is due again. */
  #undone(): void {
    for (const [id, c] of this.#inTx) {
      if (this.live(id) === c.actor) {
        this.#scheduled.set(id, c.actor);
        // What was written is due again as it was (a join captured since is newer).
        if (!this.#joins.has(id)) this.#joins.set(id, c);
        this.#armFlush();
      } else this.#committed(id, false);
    }
    this.#inTx.clear();
  }

  /** A transaction the store opened ended: what was written in it is stored when it committed. */
  #ended(committed: boolean): void {
    if (!committed) return this.#undone();
    for (const id of this.#inTx.keys()) this.#committed(id, true);
    this.#inTx.clear();
  }

  #committed(runId: string, stored: boolean): void {
    const waiting = this.#unstored.get(runId);
    if (waiting === undefined) return;
    this.#unstored.delete(runId);
    for (const resolve of waiting) resolve(stored);
  }

  #write(runId: string, c: Captured): void {
    const s = c.snapshot;
    const ctx = s.context;
    this.store.snapshots.put(
      {
        runId,
        agentId: ctx.agentId,
        surface: ctx.surface,
        status: statusOf(s),
        parentRunId: ctx.parentRunId,
        snapshot: c.persisted as Record<string, unknown>,
      },
      c.token,
    );
    if (this.store.inTransaction) this.#inTx.set(runId, c);
    else this.#committed(runId, true);
  }
}

/** A run's state as it was at one moment: its snapshot and, computed then, its persisted form. */
interface Captured {
  readonly actor: RunActor;
  readonly snapshot: RunSnapshot;
  readonly persisted: unknown;
  /** The immutable objects the persisted form was computed from (see `persistedFrom`). */
  readonly token: object[];
}

/**
 * A run's state now, persisted form included. A due write joining a transaction may run inside
 * the run's own transition (an audit action commits): XState's snapshot is then still the old
 * state while the child that settled is already done, and a persisted form computed then would
 * sit in the invoking state with a finished child — restored, that run waits for a completion
 * that never comes again. So a due state is captured when it becomes due (after the transition
 * that made it, its children started), and that capture is what joins.
 */
function capture(actor: RunActor): Captured {
  const snapshot = actor.getSnapshot();
  return { actor, snapshot, persisted: actor.getPersistedSnapshot(), token: persistedFrom(snapshot) };
}

/**
 * Whether a run's new state is written at once rather than being due at the end of this
 * event-loop turn (or at the run's park, or the host's stop, whichever is first). At once: a wait
 * for a human (also written with the approval it waits on, see `persistCurrent`), every other
 * status a run rests in, and its end. Due: every other step, a resumed run's return to `running`
 * included; a new run's first state (its start is acknowledged once it is stored, see `stored`)
 * and each model answer (`recordStep`) also join the next transaction the store opens if it comes
 * first, so the audit, approval and ledger rows of the calls an answer proposes commit with it or
 * after it. A crash can only lose the steps of the current turn, which re-run on restore behind
 * the audit (a step already recorded is not recorded again) and the ledger (a completed call is
 * never executed again, a started one is reported interrupted).
 */
function persistAtOnce(last: RunStatus | null, status: RunStatus, s: RunSnapshot): boolean {
  if (s.status === 'done') return true;
  return last !== null && status !== last && status !== 'running';
}

/**
 * The immutable XState snapshots a run's persisted snapshot is computed from: its own and, depth
 * first, every child's (an invoked effect settles in its child's snapshot before the run's own
 * moves). The same objects give the same persisted snapshot, so the store can skip the write.
 */
function persistedFrom(s: RunSnapshot): object[] {
  const out: object[] = [s];
  const visit = (children: Record<string, unknown> | undefined): void => {
    for (const child of Object.values(children ?? {})) {
      const snap = (child as { getSnapshot?: () => unknown } | undefined)?.getSnapshot?.();
      if (typeof snap !== 'object' || snap === null) continue;
      out.push(snap);
      visit((snap as { children?: Record<string, unknown> }).children);
    }
  };
  visit(s.children as Record<string, unknown>);
  return out;
}
