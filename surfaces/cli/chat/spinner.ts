import type { Clock, TimerHandle } from '../../../runtime/index.ts';
import type { Paint } from '../run/paint.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** How often the spinner's line is redrawn. */
export const SPINNER_TICK_MS = 100;

/**
 * A one-line spinner with the elapsed time (`⠙ thinking 3.2s`) while the model thinks, drawn on
 * the injected clock's timers (a test advances a simulated clock instead of waiting). `clear`
 * erases its line before anything else is written, so output never lands in the middle of it.
 */
export class Spinner {
  #timer: TimerHandle | undefined;
  #since = 0;
  #frame = 0;
  #shown = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly clock: Clock,
    private readonly paint: Paint,
    private readonly label = 'thinking',
  ) {}

  /** Whether the spinner runs now. */
  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** Starts (or keeps) the spinner; the elapsed time counts from the first start since the last stop. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#since = this.clock.now();
    this.#frame = 0;
    this.#timer = this.clock.setInterval(() => this.#draw(), SPINNER_TICK_MS);
  }

  /** Stops the spinner and erases its line. */
  stop(): void {
    if (this.#timer !== undefined) this.clock.clearInterval(this.#timer);
    this.#timer = undefined;
    this.clear();
  }

  /** Erases the spinner's line (it is drawn again at the next tick while running). */
  clear(): void {
    if (!this.#shown) return;
    this.#shown = false;
    this.write('\r\u001b[2K');
  }

  #draw(): void {
    const seconds = ((this.clock.now() - this.#since) / 1000).toFixed(1);
    const frame = FRAMES[this.#frame++ % FRAMES.length] as string;
    this.write(`\r\u001b[2K${this.paint.cyan(frame)} ${this.paint.dim(`${this.label} ${seconds}s`)}`);
    this.#shown = true;
  }
}
