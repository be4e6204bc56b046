import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import { readTraceHeaders, traceHeaders, type BusLogger, type TraceContextValues } from '../bus/index.ts';
import { consumeForever } from '../bus/consume-forever.ts';

/** The work-queue stream of runs to resume, shared by every node. */
export const WORK_STREAM = 'SNOTRA_RUN_WORK';
const WORK_SUBJECT = 'snotra.v1.cluster.resume';
const CONSUMER = 'run_resume';
const NS_PER_MS = 1_000_000;
/**
 * Pull requests expire after this long (the client's default is 30 s): a pull parked on a
 * consumer leader that died is noticed through two missed heartbeats (half the expiry each), so
 * after a server of the cluster dies a resume item waits seconds, not half a minute.
 */
export const RESUME_PULL_EXPIRES_MS = 5_000;

/** One item: a run some node must look at (a decision arrived, or its node died). */
export const WorkItem = z.strictObject({
  v: z.literal(1),
  runId: z.string().min(1).max(512),
  why: z.enum(['decision', 'failover', 'release']),
  at: z.number().int().nonnegative(),
});
export type WorkItem = z.infer<typeof WorkItem>;

/** What the handler decided: done, look again after `nak` ms, or drop a malformed item. */
export type WorkVerdict = { readonly ack: true } | { readonly nakMs: number } | { readonly term: true };

/** Takes one item: how often it was delivered, and the trace context its headers carry (or null). */
export type WorkHandler = (
  item: WorkItem,
  deliveries: number,
  trace: TraceContextValues | null,
) => Promise<WorkVerdict>;

/** Options of the queue (every node must use the same values). */
export interface WorkQueueOptions {
  readonly replicas: number;
  /** Redelivery after this long without an ack or an in-progress ack (a dead node's item moves on). */
  readonly ackWaitMs: number;
  /** Items in flight on one node at once. */
  readonly maxInFlight?: number;
}

/**
 * Runs to resume, on a replicated JetStream work-queue stream: explicit ack, an in-progress ack
 * (`working()`) every third of `ack_wait` while a run executes, redelivery to any node after
 * `ack_wait` when the holder died. `msgID` deduplicates the same item published by several nodes.
 */
export class WorkQueue {
  #stop: (() => Promise<void>) | null = null;
  #invalid = 0;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly options: WorkQueueOptions,
    private readonly logger: BusLogger,
  ) {}

  static async open(nc: NatsConnection, options: WorkQueueOptions, logger: BusLogger): Promise<WorkQueue> {
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.streams.info(WORK_STREAM);
    } catch {
      try {
        await jsm.streams.add({
          name: WORK_STREAM,
          subjects: [WORK_SUBJECT],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          num_replicas: options.replicas,
          duplicate_window: 120_000 * NS_PER_MS,
          max_msg_size: 4096,
        });
      } catch (err) {
        // Another node created it in between: bind to it.
        await jsm.streams.info(WORK_STREAM).catch(() => {
          throw err;
        });
      }
    }
    try {
      await jsm.consumers.info(WORK_STREAM, CONSUMER);
    } catch {
      await jsm.consumers
        .add(WORK_STREAM, {
          durable_name: CONSUMER,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: options.ackWaitMs * NS_PER_MS,
          max_deliver: -1,
          max_ack_pending: 10_000,
        })
        .catch(async (err: unknown) => {
          await jsm.consumers.info(WORK_STREAM, CONSUMER).catch(() => {
            throw err;
          });
        });
    }
    return new WorkQueue(nc, options, logger);
  }

  /** Items dropped as malformed. */
  get invalid(): number {
    return this.#invalid;
  }

  /**
   * Publishes an item; `dedupId` makes the same item from several nodes (within two minutes) one.
   * With `trace` (the run's trace context), it travels in the message's `traceparent` header.
   */
  async publish(item: WorkItem, dedupId: string, trace: TraceContextValues | null = null): Promise<void> {
    const headers = traceHeaders(trace);
    await jetstream(this.nc).publish(WORK_SUBJECT, JSON.stringify(item), {
      msgID: dedupId,
      ...(headers !== undefined ? { headers } : {}),
    });
  }

  /**
   * Delivers items to `handler`, several at once; each holds its message with in-progress acks
   * until it settles. A consumer that ends on its own (its server died, a leader moved) is opened
   * again until `stop`: a node never silently stops taking resume items.
   */
  async consume(handler: WorkHandler): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const consumer = await consumeForever({
      open: async () =>
        (await jetstream(this.nc).consumers.get(WORK_STREAM, CONSUMER)).consume({
          max_messages: this.options.maxInFlight ?? 64,
          expires: RESUME_PULL_EXPIRES_MS,
        }),
      // Several at once: each item holds its message with in-progress acks until it settles.
      onMessage: (m) => {
        const p = this.#handle(m, handler)
          .catch(() => {})
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      },
      logger: this.logger,
      what: 'cluster: the resume consumer',
    });
    this.#stop = () => consumer.stop();
  }

  async #handle(m: JsMsg, handler: WorkHandler): Promise<void> {
    let item: WorkItem;
    try {
      item = WorkItem.parse(JSON.parse(new TextDecoder().decode(m.data)));
    } catch {
      this.#invalid++;
      this.logger.warn({ bytes: m.data.byteLength }, 'cluster: malformed resume item dropped');
      m.term();
      return;
    }
    const beat = setInterval(
      () => {
        try {
          m.working();
        } catch {
          // Connection closing: the item is redelivered after ack_wait.
        }
      },
      Math.max(50, Math.floor(this.options.ackWaitMs / 3)),
    );
    beat.unref();
    let verdict: WorkVerdict;
    this.logger.debug(
      { runId: item.runId, why: item.why, deliveries: m.info.deliveryCount },
      'cluster: resume item taken',
    );
    try {
      verdict = await handler(item, m.info.deliveryCount, readTraceHeaders(m.headers));
    } catch (err) {
      this.logger.error(
        { runId: item.runId, err: (err as Error).message },
        'cluster: resume item failed; retried',
      );
      verdict = { nakMs: 500 };
    } finally {
      clearInterval(beat);
    }
    this.logger.debug({ runId: item.runId, verdict }, 'cluster: resume item settled');
    try {
      if ('ack' in verdict) m.ack();
      else if ('term' in verdict) m.term();
      else m.nak(verdict.nakMs);
    } catch {
      // Connection closing: redelivered later.
    }
  }

  /** Stops consuming (items in flight are redelivered to another node after ack_wait). */
  async stop(): Promise<void> {
    await this.#stop?.();
    this.#stop = null;
  }
}
