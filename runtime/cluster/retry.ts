/**
 * The deadline of a {@link withRetry}: `ms` from now on wall time. A retry waits on a real server
 * (a quorum or a stream leader being re-established), which is not the runtime's time
 * (runtime/time/clock.ts): a deadline on the runtime's clock (a simulated one, or one an embedder
 * runs ahead or behind) would retry forever or not at all.
 */
export function retryDeadline(ms: number): number {
  return Date.now() + ms;
}

/**
 * Runs `op` until it resolves, retrying failures that JetStream reports while a quorum or a stream
 * leader is being re-established (timeouts, no responders) until `deadline` (wall time, from
 * {@link retryDeadline}); then rethrows. `stopped()` ends the retries early (the node is shutting down).
 */
export async function withRetry<T>(
  op: () => Promise<T>,
  deadline: number,
  stopped: () => boolean = () => false,
): Promise<T> {
  let wait = 50;
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (Date.now() >= deadline || stopped()) throw err;
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(1000, wait * 2);
    }
  }
}
