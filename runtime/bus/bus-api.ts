import type { NatsConnection } from '@nats-io/transport-node';
import type { Envelope } from './envelope.ts';
import type { KindName, KindRegistry, KindSchemas, PayloadIn, PayloadOut } from './kinds.ts';
import type { BusStats } from './stats.ts';
import type { Subject, SubjectPattern } from './subjects.ts';
import type { TraceContextValues } from './trace-headers.ts';

/** Any kind registry (the type parameter of {@link Bus}). */
export type AnyKindRegistry = KindRegistry<KindSchemas>;

/** A validated envelope of one of the kinds `N` (a union, so handlers can narrow on `kind`). */
export type EnvelopeOf<R, N extends string> = N extends string ? Envelope<N, PayloadOut<R, N>> : never;

/** What a handler gets besides the envelope. */
export interface MessageContext<R> {
  /** The concrete subject the message was published to. */
  readonly subject: string;
  /** True when the sender waits for a reply (a request). */
  readonly canReply: boolean;
  /**
   * Answers a request with an envelope of `kind`. Throws `bus_no_reply_subject` when the message is not
   * a request, and the publish errors (`bus_invalid_payload`, `bus_payload_too_large`, ...).
   */
  reply<M extends KindName<R>>(kind: M, payload: PayloadIn<R, M>): void;
}

/** A subscriber callback. It may be async; the subscription waits for it before the next message. */
export type BusHandler<R, N extends string> = (
  envelope: EnvelopeOf<R, N>,
  ctx: MessageContext<R>,
) => void | Promise<void>;

/** A live subscription. */
export interface BusSubscription {
  /** The subscribed subject pattern. */
  readonly subject: SubjectPattern;
  /** Stops delivery at once (messages already queued are dropped). */
  unsubscribe(): void;
  /** Stops accepting new messages, finishes the queued ones, then resolves. */
  drain(): Promise<void>;
  /** Resolves when the subscription has ended and its last handler call returned. */
  readonly closed: Promise<void>;
}

/** Options of {@link Bus.publish}. */
export interface PublishOptions {
  /** The trace context of the run the message is about (none: no headers are sent). */
  readonly trace?: TraceContextValues | null;
}

/** Options of {@link Bus.request}. */
export interface RequestOptions<M extends string> {
  /** The reply kinds accepted; any other reply is `bus_invalid_reply`. */
  readonly expect: M | readonly M[];
  /** Overrides the connection's default request timeout. */
  readonly timeoutMs?: number;
}

/**
 * A bus connection: envelopes in, envelopes out, versioned subjects only.
 *
 * Guarantees: everything published is an envelope whose payload passed its kind's schema and whose
 * size is within the limit; everything delivered to a handler (or returned by `request`) passed the
 * same checks on receipt. An invalid incoming message is dropped, counted in `stats().invalid` by
 * reason and logged (reason, subject and size only — never the body); when it was a request, the
 * sender gets a `bus.error` reply with the reason as code. A handler that throws is caught, counted
 * and logged, and the subscription goes on.
 */
export interface Bus<R extends AnyKindRegistry> {
  /** The name stamped into the `source` field of every envelope sent. */
  readonly source: string;
  /** The largest envelope, in bytes, sent or accepted. */
  readonly maxMessageBytes: number;
  /** The underlying v3 connection, for JetStream/KV. Raw publishes bypass envelope checks: avoid them. */
  readonly nats: NatsConnection;
  /** Resolves when the connection is closed (by `close()` or for good by the server/network). */
  readonly closed: Promise<void>;
  /**
   * Publishes an envelope of `kind`; returns its id. With `trace`, the message carries it in the
   * `traceparent`/`tracestate` headers. Throws `bus_invalid_payload`, `bus_payload_too_large`, `bus_closed`.
   */
  publish<N extends KindName<R>>(
    subject: Subject,
    kind: N,
    payload: PayloadIn<R, N>,
    options?: PublishOptions,
  ): string;
  /** Delivers valid envelopes of the listed kinds on `subject` to `handler`, one at a time in arrival order. */
  subscribe<N extends KindName<R>>(
    subject: SubjectPattern,
    kinds: N | readonly N[],
    handler: BusHandler<R, N>,
    options?: { readonly queue?: string },
  ): BusSubscription;
  /**
   * Sends a request and resolves with the validated reply. Rejects with `bus_request_timeout`,
   * `bus_no_responders`, `bus_invalid_reply` (details.reason) or `bus_request_failed` (details.remoteCode).
   */
  request<N extends KindName<R>, M extends KindName<R>>(
    subject: Subject,
    kind: N,
    payload: PayloadIn<R, N>,
    options: RequestOptions<M>,
  ): Promise<EnvelopeOf<R, M>>;
  /** A snapshot of the counters. */
  stats(): BusStats;
  /** Resolves when the server has processed everything published so far. */
  flush(): Promise<void>;
  /** Drains subscriptions (queued messages are handled), closes the connection, waits for handlers. */
  close(): Promise<void>;
}
