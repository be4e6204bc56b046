import type { ActorEvent, RunFeedEvent } from '../../runtime/index.ts';

/** What the streams carry: the run feed's events and the live actor tree's `actor.*` changes. */
export type FeedEvent = RunFeedEvent | ActorEvent;

/** One event as the streams send it: a sequence number and the (redacted) event. */
export interface Sequenced {
  readonly seq: number;
  readonly event: FeedEvent;
}

/**
 * The run feed and the actor changes numbered for SSE/WebSocket clients, with the last `capacity` events kept for
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

  publish(event: FeedEvent): void {
    const item: Sequenced = { seq: ++this.#seq, event: this.redact(event) as FeedEvent };
    this.#buffer.push(item);
    if (this.#buffer.length > this.capacity) this.#buffer.shift();
    for (const s of this.#subscribers) s(item);
  }

  /** Buffered events after `seq` (none for a missing id: a new client starts with live events). */
  since(seq: number | null): Sequenced[] {
    return seq === null ? [] : this.#buffer.filter((e) => e.seq > seq);
  }

  /**
   * Whether a client that last saw `seq` missed events replay cannot give it: older ones than
   * the buffer holds, or an id this hub never gave (a runtime started since, whose numbering
   * began again).
   */
  missedSince(seq: number): boolean {
    if (seq > this.#seq) return true;
    const oldest = this.#buffer[0]?.seq ?? this.#seq + 1;
    return oldest > seq + 1;
  }

  subscribe(listener: (e: Sequenced) => void): () => void {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }
}
