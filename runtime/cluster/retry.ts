/**
 * Runs `op` until it resolves, retrying failures that JetStream reports while a quorum or a stream
 * leader is being re-established (timeouts, no responders) until `deadline` (epoch ms); then rethrows.
 * `stopped()` ends the retries early (the node is shutting down).
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
