import { SidecarError } from './errors.ts';

/** The sidecar's limits, from `sidecar.limits` with these defaults. */
export interface SidecarLimits {
  readonly bodyBytes: number;
  readonly frameBytes: number;
  /** Concurrent SSE and WebSocket connections. */
  readonly connections: number;
  /** Requests per minute of each client (token holders together; without the token, per Origin); `/health` is not counted. */
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

/**
 * Who a request is counted for: holders of the token together, and apart from them each Origin
 * the request came with (already checked to be allowed) or none. A page or process without the
 * token can then exhaust only its own budget, never the token holder's. The keys are bounded by
 * the allowed origins.
 */
export function clientKey(authenticated: boolean, origin: string | undefined): string {
  return authenticated ? 'token' : `anonymous ${origin ?? '-'}`;
}

/** Fixed one-minute window request counters, one per client key; `take` throws 429 once a window is full. */
export class RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {}

  take(key = 'token'): void {
    const now = this.clock();
    let w = this.#windows.get(key);
    if (w === undefined || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.#windows.set(key, w);
    }
    w.count += 1;
    if (w.count > this.perMinute) {
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
