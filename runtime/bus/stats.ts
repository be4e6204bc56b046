import { InvalidReason } from './envelope.ts';

/** Counters of one bus connection since it was opened. */
export interface BusStats {
  /** Envelopes published (requests and replies included). */
  published: number;
  /** Messages that arrived on this connection's subscriptions and request replies. */
  received: number;
  /** Valid envelopes handed to a handler (or returned from a request). */
  delivered: number;
  /** Dropped messages by reason; every reason is present (0 when it never happened). */
  invalid: Record<InvalidReason, number>;
  /** Handlers that threw or rejected. */
  handlerErrors: number;
  /** Publishes and subscriptions the server refused for lack of permission (per-actor auth). */
  permissionViolations: number;
}

/** A fresh set of zeroed counters. */
export function emptyStats(): BusStats {
  const invalid = Object.fromEntries(Object.values(InvalidReason).map((r) => [r, 0])) as Record<
    InvalidReason,
    number
  >;
  return { published: 0, received: 0, delivered: 0, invalid, handlerErrors: 0, permissionViolations: 0 };
}

/** A deep copy, so callers cannot change the live counters. */
export function copyStats(s: BusStats): BusStats {
  return { ...s, invalid: { ...s.invalid } };
}

/**
 * Limits how often one kind of event is logged: at most `burst` lines per `windowMs` per key; the
 * number of suppressed lines is reported with the next line that passes. Keeps a flood of invalid
 * messages from flooding the log (the counters still count every one).
 */
export class LogThrottle {
  private readonly windows = new Map<string, { start: number; count: number; suppressed: number }>();
  constructor(
    private readonly burst = 20,
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns `{ suppressed }` when a line for `key` may be written now, or null when it must be skipped. */
  admit(key: string): { suppressed: number } | null {
    const t = this.now();
    let w = this.windows.get(key);
    if (w === undefined || t - w.start >= this.windowMs) {
      const suppressed = w?.suppressed ?? 0;
      w = { start: t, count: 0, suppressed: 0 };
      this.windows.set(key, w);
      w.count++;
      return { suppressed };
    }
    if (w.count < this.burst) {
      w.count++;
      return { suppressed: 0 };
    }
    w.suppressed++;
    return null;
  }
}
