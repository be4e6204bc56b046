/**
 * How many calls one MCP server has in flight at once. A call past the limit waits here, in the
 * runtime, and is sent only when a slot frees: if the server crashes meanwhile, the waiting
 * call has provably never reached it (`mcp_server_unavailable`, safe to retry) — unlike a call
 * already written to its stdin, whose outcome is unknown.
 */
export class CallGate {
  #running = 0;
  readonly #queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Calls running and waiting (for status and tests). */
  get load(): { readonly running: number; readonly waiting: number } {
    return { running: this.#running, waiting: this.#queue.length };
  }

  /**
   * Resolves with a release function once a slot is free, in arrival order; rejects with the
   * signal's reason if it fires first (the call then never took a slot).
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.#running < Math.max(1, this.limit)) {
      this.#running++;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve, reject) => {
      const admit = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.#running++;
        resolve(this.#release());
      };
      const onAbort = (): void => {
        const at = this.#queue.indexOf(admit);
        if (at !== -1) this.#queue.splice(at, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(admit);
    });
  }

  #release(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#running--;
      this.#queue.shift()?.();
    };
  }
}
