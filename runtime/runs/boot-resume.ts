import { systemClock, type Clock, type TimerHandle } from '../time/clock.ts';

/**
 * How many runs brought back from the store go on at once: runs found at boot (interrupted, or
 * decided while the runtime was down), and parked runs a decision brings back (RunHost.deliver).
 */
export const RESUME_CONCURRENCY = 32;

/**
 * How long one run may hold its slot: a run that goes on longer (a slow tool, a model that takes
 * its time) lets the next one start, so a few long runs never hold the others back.
 */
export const RESUME_SLOT_MS = 10_000;

/** One run to bring back at boot. */
export interface BootResume {
  readonly runId: string;
  /** Restores the run (or delivers its decision); false when there was nothing to bring back. */
  readonly go: () => boolean;
}

/**
 * Brings back the runs found at boot with at most `limit` of them going on at once: the next one
 * starts when an earlier one settles (ends, parks again or waits for a human). Their store work
 * then overlaps (durable points share a sync) without a thousand actors starting in one turn,
 * and the event loop stays free for surfaces and new messages. Stops taking new runs once
 * `stopped()` says so (the runtime is stopping); runs not yet taken stay as stored and are
 * brought back by the next boot. A run frees its slot after `slotMs` at the latest (on `clock`).
 * Resolves when every run was taken and settled (or had its slot for `slotMs`).
 */
export async function resumeBounded(
  items: readonly BootResume[],
  limit: number,
  settled: (runId: string) => Promise<void>,
  stopped: () => boolean,
  onError: (runId: string, err: unknown) => void,
  slotMs: number = RESUME_SLOT_MS,
  clock: Clock = systemClock,
): Promise<void> {
  const held = (runId: string): Promise<void> => {
    let timer: TimerHandle | undefined;
    const late = new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, slotMs);
    });
    return Promise.race([settled(runId), late]).finally(() => clock.clearTimeout(timer));
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !stopped()) {
      const item = items[next++] as BootResume;
      let started = false;
      try {
        started = item.go();
      } catch (err) {
        onError(item.runId, err);
      }
      if (started) await held(item.runId);
      // A turn of the event loop between runs: resumes that only wait on promises would
      // otherwise run back to back and keep sockets and timers waiting until the last one.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
