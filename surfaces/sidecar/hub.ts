import type { RunFeedEvent } from '../../runtime/events.ts';

/** One event as the streams send it: a sequence number and the (redacted) run feed event. */
export interface Sequenced {
  readonly seq: number;
  readonly event: RunFeedEvent;
}

/**
 * The run feed numbered for SSE/WebSocket clients, with the last `capacity` events kept for
 * `Last-Event-ID` replay. Subscribers must not throw.
 */
export class EventHub {
  readonly #buffer: Sequenced[] = [];
  readonly #subscribers = new Set<(e: Sequenced) => void>();
  #seq = 0;

  constructor(
    private readonly capacity: number,
    private readonly redact: (value: unknown) => unknown,
  ) {}

  publish(event: RunFeedEvent): void {
    const item: Sequenced = { seq: ++this.#seq, event: this.redact(event) as RunFeedEvent };
    this.#buffer.push(item);
    if (this.#buffer.length > this.capacity) this.#buffer.shift();
    for (const s of this.#subscribers) s(item);
  }

  /** Buffered events after `seq` (all buffered ones for an unknown or missing id). */
  since(seq: number | null): Sequenced[] {
    return seq === null ? [] : this.#buffer.filter((e) => e.seq > seq);
  }

  subscribe(listener: (e: Sequenced) => void): () => void {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }
}
