/** One part's teardown: stops what that part started (a step may be async). */
export type TeardownStep = () => Promise<void> | void;

/**
 * A runtime's life: whether it is stopping (read by the parts' callbacks), the signal that aborts
 * its in-flight work, and its one teardown stack. Boot pushes each part's teardown as the part is
 * built (`onStop`); `shutdown` runs the stack in reverse, for a boot that failed halfway and for a
 * normal stop alike, so the last part built is the first stopped and nothing is stopped before
 * what depends on it.
 */
export class Lifecycle {
  stopped = false;
  readonly abort = new AbortController();
  readonly #steps: Array<{ readonly name: string; readonly step: TeardownStep }> = [];

  /** Pushes a part's teardown (named for `order`). */
  onStop(name: string, step: TeardownStep): void {
    this.#steps.push({ name, step });
  }

  /** The names of the pushed teardowns, in the order `shutdown` runs them. */
  order(): string[] {
    return this.#steps.map((s) => s.name).reverse();
  }

  /** Takes the stack (last pushed first); it is empty afterwards. */
  take(): Array<{ readonly name: string; readonly step: TeardownStep }> {
    return this.#steps.splice(0).reverse();
  }
}

/**
 * Stops a runtime, once: marks it stopping (its callbacks take no new work), aborts its in-flight
 * work, then runs every teardown pushed at boot, last built first. A step that fails does not keep
 * the others from running; the first failure is rethrown at the end.
 */
export async function shutdown(lifecycle: Lifecycle): Promise<void> {
  if (lifecycle.stopped) return;
  lifecycle.stopped = true;
  lifecycle.abort.abort();
  let failed: { readonly err: unknown } | null = null;
  for (const { step } of lifecycle.take()) {
    try {
      await step();
    } catch (err) {
      failed ??= { err };
    }
  }
  if (failed !== null) throw failed.err;
}
