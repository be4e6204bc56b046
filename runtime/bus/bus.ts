import { errors as natsErrors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type {
  AnyKindRegistry,
  Bus,
  BusHandler,
  BusSubscription,
  EnvelopeOf,
  MessageContext,
  PublishOptions,
  RequestOptions,
} from './bus-api.ts';
import { decodeEnvelope, encodeEnvelope, type EncodedEnvelope, type InvalidReason } from './envelope.ts';
import { BusError, BusErrorCode } from './errors.ts';
import { BUS_ERROR_KIND, type KindName, type PayloadIn } from './kinds.ts';
import { loggableError, loggableSubject, type BusLogger } from './logger.ts';
import { mapRequestError, mapUsageError } from './nats-errors.ts';
import { copyStats, emptyStats, LogThrottle, type BusStats } from './stats.ts';
import { isSubject, isSubjectPattern, type Subject, type SubjectPattern } from './subjects.ts';
import { traceHeaders } from './trace-headers.ts';

/** Internal settings of a {@link Bus}; built by `connectBus`. */
export interface BusSettings<R extends AnyKindRegistry> {
  readonly kinds: R;
  readonly source: string;
  readonly logger: BusLogger;
  readonly maxMessageBytes: number;
  readonly requestTimeoutMs: number;
  /** Hears each permission violation the server reports on this connection. */
  readonly onPermissionViolation?: (violation: PermissionViolation) => void;
}

/** A publish or subscription the server refused for lack of permission (the subject is not secret). */
export interface PermissionViolation {
  readonly operation: 'publish' | 'subscription';
  readonly subject: string;
  readonly queue: string | null;
}

const SNAKE_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const QUEUE_NAME = /^[A-Za-z0-9_\-:]{1,64}$/;

/** Wraps an open v3 connection in a {@link Bus}. Used by `connectBus`; not for direct use. */
export function createBus<R extends AnyKindRegistry>(nc: NatsConnection, settings: BusSettings<R>): Bus<R> {
  return new NatsBus(nc, settings);
}

class NatsBus<R extends AnyKindRegistry> implements Bus<R> {
  readonly source: string;
  readonly maxMessageBytes: number;
  readonly closed: Promise<void>;
  private readonly counters = emptyStats();
  private readonly throttle = new LogThrottle();
  private readonly loops = new Set<Promise<void>>();

  constructor(
    readonly nats: NatsConnection,
    private readonly settings: BusSettings<R>,
  ) {
    this.source = settings.source;
    const serverMax = nats.info?.max_payload;
    this.maxMessageBytes =
      typeof serverMax === 'number' && serverMax > 0
        ? Math.min(settings.maxMessageBytes, serverMax)
        : settings.maxMessageBytes;
    this.closed = nats.closed().then((err) => {
      if (err) settings.logger.warn({ err: loggableError(err) }, 'bus: connection closed with an error');
    });
    void this.watchStatus();
  }

  publish<N extends KindName<R>>(
    subject: Subject,
    kind: N,
    payload: PayloadIn<R, N>,
    options: PublishOptions = {},
  ): string {
    this.assertSubject(subject);
    const enc = this.encode(kind, payload);
    const headers = traceHeaders(options.trace ?? null);
    try {
      this.nats.publish(subject, enc.json, headers === undefined ? undefined : { headers });
    } catch (err) {
      throw mapUsageError(err);
    }
    this.counters.published++;
    return enc.envelope.id;
  }

  subscribe<N extends KindName<R>>(
    pattern: SubjectPattern,
    kinds: N | readonly N[],
    handler: BusHandler<R, N>,
    options: { readonly queue?: string } = {},
  ): BusSubscription {
    if (typeof pattern !== 'string' || !isSubjectPattern(pattern)) {
      throw new BusError(
        BusErrorCode.InvalidSubject,
        'subscribe needs a subject built by subject()/subjectPattern()',
      );
    }
    const accept = new Set<string>(typeof kinds === 'string' ? [kinds] : kinds);
    if (accept.size === 0) throw new BusError(BusErrorCode.UnknownKind, 'subscribe needs at least one kind');
    for (const k of accept) {
      if (!this.settings.kinds.has(k)) {
        throw new BusError(
          BusErrorCode.UnknownKind,
          `kind ${JSON.stringify(k.slice(0, 80))} is not registered`,
        );
      }
    }
    if (options.queue !== undefined && !QUEUE_NAME.test(options.queue)) {
      throw new BusError(
        BusErrorCode.InvalidSubject,
        'queue group names are 1-64 characters of [A-Za-z0-9_-:]',
      );
    }
    let sub;
    try {
      sub = this.nats.subscribe(pattern, options.queue === undefined ? {} : { queue: options.queue });
    } catch (err) {
      throw mapUsageError(err);
    }
    const loop = (async () => {
      for await (const msg of sub)
        await this.dispatch(msg, accept, handler as unknown as BusHandler<R, string>);
    })()
      .catch((err: unknown) => {
        this.settings.logger.error(
          { subject: loggableSubject(pattern), err: loggableError(err) },
          'bus: subscription ended with an error',
        );
      })
      .finally(() => this.loops.delete(loop));
    this.loops.add(loop);
    return {
      subject: pattern,
      unsubscribe: () => sub.unsubscribe(),
      drain: async () => {
        if (!sub.isClosed()) await sub.drain();
        await loop;
      },
      closed: loop,
    };
  }

  async request<N extends KindName<R>, M extends KindName<R>>(
    subject: Subject,
    kind: N,
    payload: PayloadIn<R, N>,
    options: RequestOptions<M>,
  ): Promise<EnvelopeOf<R, M>> {
    this.assertSubject(subject);
    const expect = typeof options.expect === 'string' ? [options.expect] : options.expect;
    const enc = this.encode(kind, payload);
    const timeout = options.timeoutMs ?? this.settings.requestTimeoutMs;
    let msg: Msg;
    try {
      this.counters.published++;
      msg = await this.nats.request(subject, enc.json, { timeout });
    } catch (err) {
      throw mapRequestError(err, subject, timeout);
    }
    this.counters.received++;
    const result = decodeEnvelope(
      msg.data,
      this.settings.kinds,
      this.maxMessageBytes,
      new Set<string>([...expect, BUS_ERROR_KIND]),
    );
    if (!result.ok) {
      this.dropped(result.reason, msg.subject, msg.data.byteLength);
      throw new BusError(
        BusErrorCode.InvalidReply,
        `the reply to a request on ${subject} was dropped: ${result.reason}`,
        {
          details: { reason: result.reason },
        },
      );
    }
    const env = result.envelope;
    if (env.kind === BUS_ERROR_KIND && !expect.includes(BUS_ERROR_KIND as M)) {
      const remoteCode = (env.payload as { code: string }).code;
      throw new BusError(BusErrorCode.RequestFailed, `the responder on ${subject} failed: ${remoteCode}`, {
        details: { remoteCode },
      });
    }
    this.counters.delivered++;
    return env as EnvelopeOf<R, M>;
  }

  stats(): BusStats {
    return copyStats(this.counters);
  }

  async flush(): Promise<void> {
    try {
      await this.nats.flush();
    } catch (err) {
      throw mapUsageError(err);
    }
  }

  async close(): Promise<void> {
    if (!this.nats.isClosed()) {
      try {
        if (this.nats.isDraining()) await this.nats.closed();
        else await this.nats.drain();
      } catch {
        await this.nats.close().catch(() => {});
      }
    }
    await this.closed;
    await Promise.allSettled([...this.loops]);
  }

  private async dispatch(
    msg: Msg,
    accept: ReadonlySet<string>,
    handler: BusHandler<R, string>,
  ): Promise<void> {
    this.counters.received++;
    const size = msg.data.byteLength;
    const result = decodeEnvelope(msg.data, this.settings.kinds, this.maxMessageBytes, accept);
    if (!result.ok) {
      this.dropped(result.reason, msg.subject, size);
      if (msg.reply) this.replyError(msg, result.reason);
      return;
    }
    this.counters.delivered++;
    let replied = false;
    const ctx: MessageContext<R> = {
      subject: msg.subject,
      canReply: Boolean(msg.reply),
      reply: (kind, payload) => {
        if (!msg.reply) throw new BusError(BusErrorCode.NoReplySubject, 'this message is not a request');
        const enc = this.encode(kind, payload);
        msg.respond(enc.json);
        replied = true;
        this.counters.published++;
      },
    };
    try {
      await handler(result.envelope as EnvelopeOf<R, string>, ctx);
    } catch (err) {
      this.counters.handlerErrors++;
      this.settings.logger.error(
        {
          subject: loggableSubject(msg.subject),
          kind: result.envelope.kind,
          id: result.envelope.id,
          err: loggableError(err),
        },
        'bus: handler failed',
      );
      if (msg.reply && !replied) {
        const code = (err as { code?: unknown } | null)?.code;
        this.replyError(msg, typeof code === 'string' && SNAKE_CODE.test(code) ? code : 'handler_failed');
      }
    }
  }

  private encode(kind: string, payload: unknown): EncodedEnvelope {
    const enc = encodeEnvelope(this.settings.kinds, kind, payload, this.source);
    if (enc.bytes > this.maxMessageBytes) {
      throw new BusError(
        BusErrorCode.PayloadTooLarge,
        `envelope of kind ${kind} is ${enc.bytes} bytes; the limit is ${this.maxMessageBytes}`,
        { details: { kind, bytes: enc.bytes, max: this.maxMessageBytes } },
      );
    }
    return enc;
  }

  private replyError(msg: Msg, code: string): void {
    try {
      msg.respond(encodeEnvelope(this.settings.kinds, BUS_ERROR_KIND, { code }, this.source).json);
      this.counters.published++;
    } catch (err) {
      this.settings.logger.warn({ err: loggableError(err) }, 'bus: could not send an error reply');
    }
  }

  private dropped(reason: InvalidReason, subject: string, size: number): void {
    this.counters.invalid[reason]++;
    const admitted = this.throttle.admit(reason);
    if (admitted === null) return;
    this.settings.logger.warn(
      {
        reason,
        subject: loggableSubject(subject),
        size,
        ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}),
      },
      'bus: dropped invalid message',
    );
  }

  private assertSubject(subject: string): void {
    if (typeof subject !== 'string' || !isSubject(subject)) {
      throw new BusError(
        BusErrorCode.InvalidSubject,
        'publish/request need a concrete subject built by subject()',
      );
    }
  }

  private permissionViolation(err: InstanceType<typeof natsErrors.PermissionViolationError>): void {
    const v: PermissionViolation = {
      operation: err.operation,
      subject: err.subject,
      queue: err.queue ?? null,
    };
    this.counters.permissionViolations++;
    const admitted = this.throttle.admit('permission_violation');
    if (admitted !== null) {
      this.settings.logger.warn(
        {
          operation: v.operation,
          subject: loggableSubject(v.subject),
          source: this.source,
          ...(admitted.suppressed > 0 ? { suppressed: admitted.suppressed } : {}),
        },
        'bus: permission violation',
      );
    }
    try {
      this.settings.onPermissionViolation?.(v);
    } catch (e) {
      this.settings.logger.error({ err: loggableError(e) }, 'bus: permission violation listener threw');
    }
  }

  private async watchStatus(): Promise<void> {
    const log = this.settings.logger;
    try {
      for await (const s of this.nats.status()) {
        switch (s.type) {
          case 'disconnect':
          case 'staleConnection':
          case 'slowConsumer':
          case 'ldm':
            log.warn({ status: s.type }, 'bus: connection status');
            break;
          case 'reconnect':
            log.info({ status: s.type }, 'bus: connection status');
            break;
          case 'error':
            if (s.error instanceof natsErrors.PermissionViolationError) {
              this.permissionViolation(s.error);
              break;
            }
            log.warn({ status: s.type, err: loggableError(s.error) }, 'bus: connection status');
            break;
          default:
            break;
        }
      }
    } catch {
      // the status iterator ends with the connection
    }
  }
}
