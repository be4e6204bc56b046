/**
 * The runtime's time: what time it is and when to wake up, on one injected object. Every
 * component with a deadline, expiry, TTL or schedule reads `now` and arms its timers on the same
 * clock, so a test that advances a {@link SimulatedClock} moves both at once, without waiting.
 * Waits on a real process or server (an HTTP timeout, a child's stop grace, a server's TTL) are
 * not the runtime's time and stay on Node's timers.
 */

declare const timerBrand: unique symbol;

/** A timer armed on a {@link Clock}; only the clock that armed it can clear it. */
export type TimerHandle = { readonly [timerBrand]: true };

/** What time it is (ms since the epoch) and timers measured on that same time. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `ms` from now (a negative delay is 0). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer armed with `setTimeout`; a fired, cleared or foreign handle is ignored. */
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Calls `fn` every `ms` until cleared. */
  setInterval(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer armed with `setInterval`; a cleared or foreign handle is ignored. */
  clearInterval(handle: TimerHandle | undefined): void;
}

/** The longest delay Node's timers take (a longer one would fire at once). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

const clamp = (ms: number): number => Math.min(Math.max(0, ms), MAX_TIMER_DELAY_MS);

/**
 * Wall time and Node's timers. Delays are clamped to what Node accepts (a later deadline fires
 * early; its owner checks `now` and arms again), and every timer is unref'd: a runtime timer
 * never keeps the process alive on its own.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, clamp(ms)).unref() as unknown as TimerHandle,
  clearTimeout: (handle) => clearTimeout(handle as unknown as NodeJS.Timeout | undefined),
  setInterval: (fn, ms) => setInterval(fn, clamp(ms)).unref() as unknown as TimerHandle,
  clearInterval: (handle) => clearInterval(handle as unknown as NodeJS.Timeout | undefined),
};

/**
 * A clock that reads `now` from `now` (an embedder's or a test's function, e.g. one running ahead
 * of wall time) with Node's timers for the delays: a timer may then fire before `now` reaches
 * the deadline it was armed for, and its owner arms again for the rest.
 */
export function clockFromNow(now: () => number): Clock {
  return { ...systemClock, now };
}

/**
 * The runtime's clock from its options: a {@link Clock} as given, a bare `() => number` (the
 * earlier form of the option) as {@link clockFromNow}, nothing as {@link systemClock}.
 */
export function toClock(clock: Clock | (() => number) | undefined): Clock {
  if (clock === undefined) return systemClock;
  return typeof clock === 'function' ? clockFromNow(clock) : clock;
}
