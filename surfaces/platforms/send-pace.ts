/**
 * The pace of one bot's outbound messages: the platform's rate limits kept on this side, so a
 * reply waits its turn instead of being refused. One pace per bot (a slot every
 * `1000 / botPerSecond` ms), a per-chat spacing where the platform has one, and a hold for the
 * whole bot when the platform says `retry_after`. Turns are given in arrival order; after a
 * hold, waiting messages take fresh slots one by one, never all at the same moment. Time and
 * timers come from the runtime's clock, so a test advances it instead of sleeping.
 */
import type { Clock, TimerHandle } from '../../runtime/index.ts';

/** A platform's send limits. */
export interface PaceLimits {
  /** Messages per second for the whole bot. */
  readonly botPerSecond: number;
  /** Least time between two messages to one chat (ms); 0 for none. */
  readonly chatIntervalMs: number;
  /** Retry backoff of errors that are not a rate limit (ms): first delay and cap, jittered. */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
}

/**
 * Telegram's documented limits — about 30 messages/s per bot, one per second per chat — kept
 * with a margin (28/s): a request's arrival on Telegram's side varies by its latency.
 */
export const TELEGRAM_PACE: PaceLimits = {
  botPerSecond: 28,
  chatIntervalMs: 1000,
  backoffBaseMs: 1000,
  backoffMaxMs: 60_000,
};

/** Resolves after `ms` on `clock`, or at once when `signal` fires. */
export function waitOn(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = (): void => {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer: TimerHandle = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Guarantees: turns of the bot are taken `1000 / botPerSecond` ms apart and no more than
 * `botPerSecond` are given in any second (timers that fire late are held back, not bunched);
 * two turns of one chat are at least `chatIntervalMs` apart; no turn falls inside a hold; a turn is given no earlier than
 * asked. `backoff(n)` is the n-th retry delay, doubling to the cap, each drawn from its upper
 * half at random so retries spread out.
 */
export class SendPace {
  readonly #spacing: number;
  /** The bot's slots taken and not yet past, in time order. */
  #slots: number[] = [];
  /** When each chat's next free slot is. */
  readonly #chatNext = new Map<number, number>();
  #holdUntil = 0;
  /** When the bot's last turns were given (at most `botPerSecond` of them), oldest first. */
  readonly #given: number[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly limits: PaceLimits,
    private readonly random: () => number = Math.random,
  ) {
    this.#spacing = 1000 / Math.max(0.001, limits.botPerSecond);
  }

  /** Until when the bot is held (`retry_after`), or 0. */
  get heldUntil(): number {
    return this.#holdUntil > this.clock.now() ? this.#holdUntil : 0;
  }

  /**
   * Waits for the turn of a message to `chatId` and takes it. Resolves false when `signal`
   * fired first (no turn taken).
   */
  async turn(chatId: number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      const now = this.clock.now();
      const at = this.#take(Math.max(now, this.#chatNext.get(chatId) ?? 0, this.#holdUntil));
      if (this.limits.chatIntervalMs > 0) this.#chatNext.set(chatId, at + this.limits.chatIntervalMs);
      this.#prune(now);
      await waitOn(this.clock, at - now, signal);
      if (signal.aborted) return false;
      // A hold that came while this turn waited moves it past the hold (a fresh slot).
      if (this.#holdUntil > at) continue;
      // Timers that fire late fire together: the window of the last second is checked as given.
      const woke = this.clock.now();
      const cap = Math.max(1, Math.floor(this.limits.botPerSecond));
      const oldest = this.#given.length >= cap ? (this.#given[this.#given.length - cap] as number) : null;
      if (oldest !== null && oldest > woke - 1000) {
        await waitOn(this.clock, oldest + 1000 - woke, signal);
        if (signal.aborted) return false;
        if (this.#holdUntil > this.clock.now()) continue;
      }
      this.#given.push(this.clock.now());
      if (this.#given.length > cap) this.#given.splice(0, this.#given.length - cap);
      return true;
    }
  }

  /** The platform said to wait `ms` (`retry_after`): no turn of the bot is given before then. */
  hold(ms: number): void {
    this.#holdUntil = Math.max(this.#holdUntil, this.clock.now() + Math.max(0, ms));
  }

  /** The delay before retry `attempt` (1, 2, …) of an error that is not a rate limit. */
  backoff(attempt: number): number {
    const full = Math.min(
      this.limits.backoffMaxMs,
      this.limits.backoffBaseMs * 2 ** Math.max(0, attempt - 1),
    );
    return full / 2 + (full / 2) * this.random();
  }

  /**
   * Takes the bot's earliest free slot at or after `ready`: one at least a spacing away from
   * every slot taken (a message held back by its chat does not hold back other chats).
   */
  #take(ready: number): number {
    let at = ready;
    let i = 0;
    while (i < this.#slots.length && (this.#slots[i] as number) <= at - this.#spacing) i++;
    for (; i < this.#slots.length; i++) {
      const slot = this.#slots[i] as number;
      if (slot >= at + this.#spacing) break;
      at = slot + this.#spacing;
    }
    this.#slots.splice(i, 0, at);
    return at;
  }

  #prune(now: number): void {
    let past = 0;
    while (past < this.#slots.length && (this.#slots[past] as number) < now - this.#spacing) past++;
    if (past > 0) this.#slots.splice(0, past);
    if (this.#chatNext.size < 4096) return;
    for (const [chat, next] of this.#chatNext) if (next <= now) this.#chatNext.delete(chat);
  }
}
