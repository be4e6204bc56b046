/**
 * A bound on one bot's requests in flight. The pace bounds how many start each second; this
 * bounds how many are unanswered at once, whatever the platform's latency: a crash leaves at
 * most `limit` reply parts cut mid-send (each `unknown`, its chat told), not every part that
 * started while answers were slow. Permits are given in arrival order.
 */
export class InFlight {
  #used = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`in-flight limit must be ≥ 1, got ${limit}`);
  }

  /** Requests now holding a permit. */
  get used(): number {
    return this.#used;
  }

  /** Waits for a permit; resolves false (holding none) when `signal` fired first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.#used < this.limit) {
      this.#used++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = (): void => {
        signal.removeEventListener('abort', abort);
        this.#used++;
        resolve(true);
      };
      const abort = (): void => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        resolve(false);
      };
      this.#waiting.push(grant);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Gives a permit back: the longest waiting request takes it. */
  release(): void {
    this.#used = Math.max(0, this.#used - 1);
    const next = this.#waiting.shift();
    if (next !== undefined) next();
  }
}
