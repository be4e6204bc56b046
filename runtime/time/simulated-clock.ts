import type { Clock, TimerHandle } from './clock.ts';

interface Pending {
  readonly fn: () => void;
  due: number;
  /** Arming order: timers due at the same time fire in the order they were armed. */
  seq: number;
  /** Set for an interval: its period. */
  readonly every: number | null;
}

/**
 * A clock for tests: time stands still until the test moves it, and moving it fires the timers
 * that fall due, in due-time order (ties in arming order), with `now` at each timer's due time
 * while it runs. Timers armed by a callback during a move fire in the same move when they fall
 * due before its end. Callbacks run synchronously: what they start asynchronously (a store
 * write, a promise) the test awaits as usual.
 */
export class SimulatedClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, Pending>();

  /** Starts at `epoch` (ms since the epoch). */
  constructor(epoch: number = Date.now()) {
    this.#now = epoch;
  }

  /** The simulated time. */
  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.#arm(fn, ms, null);
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.#timers.delete(handle as unknown as number);
  }

  /** Calls `fn` every `ms` (at least 1 ms, so a move always ends). */
  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.#arm(fn, ms, Math.max(1, ms));
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.clearTimeout(handle);
  }

  /** How many timers are armed (intervals count once). */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer due up to the new time (see the class doc). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`SimulatedClock.advance: ${ms} is not a duration`);
    const end = this.#now + ms;
    for (;;) {
      const [id, next] = this.#first(end);
      if (next === undefined) break;
      this.#now = Math.max(this.#now, next.due);
      if (next.every === null) this.#timers.delete(id);
      else {
        next.due += next.every;
        next.seq = ++this.#seq;
      }
      next.fn();
    }
    this.#now = end;
  }

  /**
   * Sets the time to `t`: forward, as `advance(t - now)`; backward (a wall clock set back), only
   * the time moves and armed timers keep their due times.
   */
  set(t: number): void {
    if (t >= this.#now) this.advance(t - this.#now);
    else this.#now = t;
  }

  #arm(fn: () => void, ms: number, every: number | null): TimerHandle {
    const seq = ++this.#seq;
    this.#timers.set(seq, { fn, due: this.#now + Math.max(0, ms), seq, every });
    return seq as unknown as TimerHandle;
  }

  /** The timer to fire next, when one is due by `end`. */
  #first(end: number): [number, Pending | undefined] {
    let found: [number, Pending | undefined] = [0, undefined];
    for (const [id, t] of this.#timers) {
      if (t.due > end) continue;
      const best = found[1];
      if (best === undefined || t.due < best.due || (t.due === best.due && t.seq < best.seq)) found = [id, t];
    }
    return found;
  }
}
