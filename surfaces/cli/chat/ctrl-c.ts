/**
 * The chat's one SIGINT listener, for its whole life (the prompt, turns, slash commands and the
 * shutdown). Whoever holds the terminal at the moment (a turn, the prompt) takes Ctrl-C with
 * `hold`; between them the fallback given at install time gets it. With no listener at all a
 * Ctrl-C that reaches the process as a signal (the terminal in its normal mode, between two
 * prompts or while the runtime stops) would kill the chat with status 130, its runtime not
 * stopped.
 */
export class CtrlC {
  #holder: (() => void) | null = null;
  readonly #listener = (): void => (this.#holder ?? this.#fallback)();
  #fallback: () => void;

  constructor(fallback: () => void) {
    this.#fallback = fallback;
    process.on('SIGINT', this.#listener);
  }

  /** `onCtrlC` takes SIGINT until the returned release is called. */
  hold(onCtrlC: () => void): () => void {
    this.#holder = onCtrlC;
    return () => {
      if (this.#holder === onCtrlC) this.#holder = null;
    };
  }

  /** What a SIGINT no holder takes does from now on. */
  otherwise(fallback: () => void): void {
    this.#fallback = fallback;
  }

  /** Removes the listener (the default SIGINT behaviour comes back). */
  close(): void {
    process.off('SIGINT', this.#listener);
  }
}
