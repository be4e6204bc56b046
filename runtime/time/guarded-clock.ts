import type { Clock } from './clock.ts';

/**
 * A runtime's clock: the given one, whose timer callbacks never throw into the process (a
 * throw from a Node timer is an uncaught exception: it would end the runtime) and do nothing once
 * `active` says the runtime's work is over (its store closed, the file gone or a test's
 * simulated crash: a timer armed before would fail on it; an interval is cleared then). An error
 * goes to `onError` with what the timer was.
 */
export function guardTimers(
  clock: Clock,
  active: () => boolean,
  onError: (err: unknown, kind: 'timeout' | 'interval') => void,
): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (fn, ms) =>
      clock.setTimeout(() => {
        if (!active()) return;
        try {
          fn();
        } catch (err) {
          onError(err, 'timeout');
        }
      }, ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
    setInterval: (fn, ms) => {
      const handle = clock.setInterval(() => {
        if (!active()) {
          clock.clearInterval(handle);
          return;
        }
        try {
          fn();
        } catch (err) {
          onError(err, 'interval');
        }
      }, ms);
      return handle;
    },
    clearInterval: (handle) => clock.clearInterval(handle),
  };
}
