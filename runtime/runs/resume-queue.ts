import type { ApprovalRecord } from '../../store/index.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';
import { RESUME_CONCURRENCY, RESUME_SLOT_MS } from './boot-resume.ts';
import type { RunActor } from './run-status.ts';

/** What delivering a decision needs of the run host. */
export interface DeliveryHost {
  /** The live actor of a run, if any. */
  live(runId: string): RunActor | undefined;
  /** Restores a parked run; false when there is nothing to restore. */
  restore(runId: string): boolean;
  /** Resolves once a run no longer needs the CPU for now (see `RunHost.whenSettled`). */
  whenSettled(runId: string): Promise<void>;
}

/**
 * Delivers human decisions (and expiries) to the runs waiting on them, each approval at most
 * once. A parked run is restored to hear its decision, with at most `RESUME_CONCURRENCY` of them
 * coming back at once: the rest wait their turn in order (the decision is already durable in the
 * store; a restart delivers it again).
 */
export class ResumeQueue {
  /** Approvals delivered to each live or parked run (dropped when the run ends). */
  readonly #delivered = new Map<string, Set<string>>();
  /** Decisions for parked runs waiting for a resume slot, oldest first (ids queued, to queue each once). */
  readonly #queued: ApprovalRecord[] = [];
  readonly #queuedIds = new Set<string>();
  /** Parked runs brought back for a decision that have not settled yet. */
  #resuming = 0;
  #stopping = false;

  constructor(
    private readonly host: DeliveryHost,
    /** Resume slots are armed on this clock. */
    private readonly clock: Clock,
  ) {}

  /** Delivers a decision to its run, restoring the run when it is parked. */
  deliver(approval: ApprovalRecord): void {
    this.#deliver(approval, false);
  }

  /** A run ended: what was delivered to it is forgotten. */
  forget(runId: string): void {
    this.#delivered.delete(runId);
  }

  /** The host is stopping: queued decisions are dropped (a restart delivers them again). */
  stop(): void {
    this.#stopping = true;
    this.#queued.length = 0;
    this.#queuedIds.clear();
  }

  #deliver(approval: ApprovalRecord, fromQueue: boolean): void {
    if (approval.status === 'pending' || approval.runId === null) return;
    if (this.#delivered.get(approval.runId)?.has(approval.id) === true) return;
    if (this.host.live(approval.runId) === undefined) {
      if (this.#resuming >= RESUME_CONCURRENCY || (!fromQueue && this.#queued.length > 0)) {
        if (!this.#queuedIds.has(approval.id)) {
          this.#queuedIds.add(approval.id);
          this.#queued.push(approval);
        }
        return;
      }
      if (!this.host.restore(approval.runId)) return;
      this.#resuming++;
      this.#send(approval.runId, approval);
      // Settled once it ends, parks or waits for a human again (the decision was sent above).
      void this.#held(approval.runId).then(() => {
        this.#resuming--;
        // The next one after a turn of the event loop: a chain of resumes that only ever waits
        // on promises would otherwise keep sockets and timers (the sidecar, the bus) waiting.
        setImmediate(() => this.#nextQueued());
      });
      return;
    }
    this.#send(approval.runId, approval);
  }

  #send(runId: string, approval: ApprovalRecord): void {
    const actor = this.host.live(runId);
    if (actor === undefined || approval.status === 'pending') return;
    let delivered = this.#delivered.get(runId);
    if (delivered === undefined) this.#delivered.set(runId, (delivered = new Set()));
    delivered.add(approval.id);
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: approval.id,
      decision: approval.status,
      user: approval.decidedBy,
      reason: approval.decisionReason,
      decidedAt: approval.decidedAt,
    });
  }

  /** Until a run settles, or `RESUME_SLOT_MS` at the latest (a long run does not hold the others back). */
  #held(runId: string): Promise<void> {
    let timer: TimerHandle | undefined;
    const late = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(resolve, RESUME_SLOT_MS);
    });
    return Promise.race([this.host.whenSettled(runId), late]).finally(() => this.clock.clearTimeout(timer));
  }

  #nextQueued(): void {
    while (!this.#stopping && this.#resuming < RESUME_CONCURRENCY) {
      const next = this.#queued.shift();
      if (next === undefined) return;
      this.#queuedIds.delete(next.id);
      this.#deliver(next, true);
    }
  }
}
