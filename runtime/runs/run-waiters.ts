import type { RunOutcome } from '../../machines/run/types.ts';
import type { Store } from '../../store/index.ts';
import type { RunHost } from './run-host.ts';
import { storedOutcome } from './stored-run.ts';

/** Who waits for a run to end (`waitForRun`), told by the run router when it ends. */
export class RunWaiters {
  readonly #waiters = new Map<string, (outcome: RunOutcome) => void>();

  constructor(
    private readonly runs: Pick<RunHost, 'isLive'>,
    private readonly store: Store,
  ) {}

  /** Resolves when the run ends (or at once with its stored outcome when it already ended). */
  waitForRun(runId: string): Promise<RunOutcome> {
    const { runs, store } = this;
    // The status column first: a live or parked run's snapshot is not decoded to be waited on.
    const status = runs.isLive(runId) ? null : store.snapshots.statusOf(runId);
    const ended = status === 'completed' || status === 'failed' || status === 'denied';
    const stored = ended ? store.snapshots.get(runId) : null;
    if (
      stored !== null &&
      (stored.status === 'completed' || stored.status === 'failed' || stored.status === 'denied')
    ) {
      return Promise.resolve(storedOutcome(stored) ?? { status: stored.status, reason: 'stored' });
    }
    return new Promise((resolve) => {
      const prev = this.#waiters.get(runId);
      this.#waiters.set(runId, (o) => {
        prev?.(o);
        resolve(o);
      });
    });
  }

  /** A run ended: whoever waits for it gets its outcome. */
  ended(runId: string, outcome: RunOutcome): void {
    const waiter = this.#waiters.get(runId);
    this.#waiters.delete(runId);
    waiter?.(outcome);
  }
}
