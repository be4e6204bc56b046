import { SidecarError } from './errors.ts';

/** The sidecar's limits, from `sidecar.limits` with these defaults. */
export interface SidecarLimits {
  readonly bodyBytes: number;
  readonly frameBytes: number;
  /** Concurrent SSE and WebSocket connections. */
  readonly connections: number;
  /** Requests per minute (all clients together; `/health` is not counted). */
  readonly requestsPerMinute: number;
}

export const DEFAULT_LIMITS: SidecarLimits = {
  bodyBytes: 1024 * 1024,
  frameBytes: 1024 * 1024,
  connections: 32,
  requestsPerMinute: 1200,
};

/** Headers must arrive within this many milliseconds; a whole request within REQUEST_TIMEOUT_MS. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

export function limitsOf(config: Partial<SidecarLimits> | undefined): SidecarLimits {
  return {
    ...DEFAULT_LIMITS,
    ...Object.fromEntries(Object.entries(config ?? {}).filter(([, v]) => v !== undefined)),
  };
}

/** A fixed one-minute window request counter; `take` throws 429 once the window is full. */
export class RateLimiter {
  #windowStart = 0;
  #count = 0;
  constructor(
    private readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {}

  take(): void {
    const now = this.clock();
    if (now - this.#windowStart >= 60_000) {
      this.#windowStart = now;
      this.#count = 0;
    }
    this.#count += 1;
    if (this.#count > this.perMinute) {
      throw new SidecarError(
        429,
        'rate_limited',
        `more than ${this.perMinute} requests in a minute; try again later`,
      );
    }
  }
}

/** Counts open streaming connections (SSE and WebSocket); `acquire` throws 429 at the cap. */
export class ConnectionGate {
  #open = 0;
  constructor(private readonly cap: number) {}

  acquire(): () => void {
    if (this.#open >= this.cap) {
      throw new SidecarError(429, 'too_many_connections', `at most ${this.cap} event streams may be open`);
    }
    this.#open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
    };
  }
}
