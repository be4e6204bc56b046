/**
 * Each live run's own cancel signal: aborted when a human interrupts that run (`RunHost.interrupt`)
 * or when the runtime stops (the base signal). A run's effects (a model request, a tool's child
 * process) see it as `ctx.signal`, so interrupting one run ends its in-flight work without
 * touching the others. An interrupted run gets a fresh signal when it is brought back.
 */
export class RunSignals {
  readonly #runs = new Map<string, { controller: AbortController; unlink: () => void }>();

  /** The signal a run's effects run under now: aborted with `base` (the runtime's stop) too. */
  signalOf(runId: string, base: AbortSignal): AbortSignal {
    const known = this.#runs.get(runId);
    if (known !== undefined) return known.controller.signal;
    const controller = new AbortController();
    if (base.aborted) controller.abort();
    const follow = (): void => controller.abort();
    base.addEventListener('abort', follow, { once: true });
    this.#runs.set(runId, { controller, unlink: () => base.removeEventListener('abort', follow) });
    return controller.signal;
  }

  /** Aborts the run's in-flight effects; its next effects run under a new signal. */
  abort(runId: string): void {
    const known = this.#runs.get(runId);
    this.forget(runId);
    known?.controller.abort();
  }

  /** The run ended: its signal is no longer needed. */
  forget(runId: string): void {
    this.#runs.get(runId)?.unlink();
    this.#runs.delete(runId);
  }
}
