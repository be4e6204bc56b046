import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  decodeEnvelope,
  encodeEnvelope,
  readTraceHeaders,
  subject,
  traceHeaders,
  subjectPattern,
  Wildcard,
  type BusLogger,
  type TraceContextValues,
} from './bus/index.ts';
import type { AgentMessage } from '../machines/agent/machine.ts';
import { RUNTIME_KINDS } from './messages.ts';
import { consumeForever } from './bus/consume-forever.ts';

/** The JetStream stream that holds messages to agents until an agent has started their run. */
export const AGENT_STREAM = 'SNOTRA_AGENT_MESSAGES';

const NS_PER_MS = 1_000_000;
const ACK_WAIT_MS = 5_000;
/**
 * Pull requests expire after this long (the client's default is 30 s). A pull waiting on a
 * consumer leader that died is only noticed through two missed heartbeats (half the expiry each),
 * so this bounds how long a new message waits after a server of a cluster dies.
 */
export const AGENT_PULL_EXPIRES_MS = 5_000;
/** Largest message an agent accepts; bigger ones are dropped and counted as `oversized`. */
const MAX_MESSAGE_BYTES = 256 * 1024;
/** The stream stores up to 1 MiB so that an oversized message reaches the consumer and is counted, not lost silently. */
const STREAM_MAX_BYTES = 1024 * 1024;
const ACCEPT = new Set(['agent.message']);

/**
 * The agent message stream, with `replicas` copies (1 on the embedded server; a cluster node
 * creates it replicated before the queue opens it, so messages survive the loss of a server).
 */
export function agentStreamConfig(replicas: number) {
  return {
    name: AGENT_STREAM,
    subjects: [subjectPattern('agent', Wildcard.One, 'message')],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_msg_size: STREAM_MAX_BYTES,
    duplicate_window: 120_000 * NS_PER_MS,
    num_replicas: replicas,
  };
}

/** JetStream publish options of an agent message: deduplicated by its id, with its trace headers. */
function publishOptions(message: Omit<AgentMessage, 'type'>, trace: TraceContextValues | null) {
  const headers = traceHeaders(trace);
  return { msgID: message.messageId, ...(headers === undefined ? {} : { headers }) };
}

/** What a consumer decides for one message: done, drop for good (invalid), or try again later. */
export type Verdict = 'ack' | 'term' | 'nak';

/**
 * Messages to agents, durable on JetStream (file storage under the state dir): a message is
 * acknowledged only once its run exists in the store, so a crash between publish and run start
 * loses nothing (it is redelivered and the run id, derived from the message id, dedupes it).
 */
export class AgentQueue {
  readonly #stops: Array<() => Promise<void>> = [];
  #invalid = 0;
  #pullConnection: ((agentId: string) => Promise<NatsConnection>) | null = null;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly logger: BusLogger,
  ) {}

  /** Creates the stream if needed (work-queue retention: a message goes once it is acknowledged). */
  static async open(nc: NatsConnection, logger: BusLogger): Promise<AgentQueue> {
    const jsm = await jetstreamManager(nc);
    const config = agentStreamConfig(1);
    let exists = true;
    try {
      const info = await jsm.streams.info(AGENT_STREAM);
      if (info.config.max_msg_size !== STREAM_MAX_BYTES)
        await jsm.streams.update(AGENT_STREAM, { max_msg_size: STREAM_MAX_BYTES });
    } catch {
      exists = false;
    }
    if (!exists) await jsm.streams.add(config);
    return new AgentQueue(nc, logger);
  }

  /**
   * Per-actor bus auth: each agent's messages are then pulled and acknowledged on the connection
   * `connectionOf` gives (the agent's own); the durable consumer is still created on this queue's
   * connection (the gateway's), since an actor may not manage consumers.
   */
  pullOn(connectionOf: (agentId: string) => Promise<NatsConnection>): void {
    this.#pullConnection = connectionOf;
  }

  /** Messages dropped as invalid since start. */
  get invalid(): number {
    return this.#invalid;
  }

  /**
   * Publishes a message to an agent and resolves once JetStream has stored it; `trace` (the
   * context of the traced run that sends it) goes in its `traceparent`/`tracestate` headers.
   */
  async publish(
    agentId: string,
    message: Omit<AgentMessage, 'type'>,
    trace: TraceContextValues | null = null,
  ): Promise<void> {
    const { json } = encodeEnvelope(RUNTIME_KINDS, 'agent.message', message, 'runtime');
    await jetstream(this.nc).publish(
      subject('agent', agentId, 'message'),
      json,
      publishOptions(message, trace),
    );
  }

  /**
   * Publishes a message like `publish` and, without waiting for the bus round trip, hands it to
   * `local` (this process's own consumer handler of the agent) decoded exactly as a delivery
   * would be: the same envelope check, size limit and schema. Resolves once the message is
   * durable — JetStream stored it, or `local` said `ack` (its run is in the store); rejects only
   * when neither holds. JetStream still delivers the message later, and the handler, finding the
   * run, acknowledges it: a run starts once whichever way it comes (its id is the message's).
   */
  async publishAndStart(
    agentId: string,
    message: Omit<AgentMessage, 'type'>,
    local: (message: Omit<AgentMessage, 'type'>, trace: TraceContextValues | null) => Promise<Verdict>,
    trace: TraceContextValues | null = null,
  ): Promise<void> {
    const { json } = encodeEnvelope(RUNTIME_KINDS, 'agent.message', message, 'runtime');
    const stored = jetstream(this.nc)
      .publish(subject('agent', agentId, 'message'), json, publishOptions(message, trace))
      .then(() => undefined);
    const decoded = decodeEnvelope(Buffer.from(json, 'utf8'), RUNTIME_KINDS, MAX_MESSAGE_BYTES, ACCEPT);
    // Refused by the consumer's own check: it is dropped and counted at delivery, as before.
    if (!decoded.ok) return stored;
    // The trace context as a delivery would read it back from the headers (a malformed one: none).
    const started = local(
      decoded.envelope.payload as Omit<AgentMessage, 'type'>,
      readTraceHeaders(traceHeaders(trace)),
    ).then(
      (verdict) => verdict === 'ack',
      (err: unknown) => {
        this.logger.error({ agentId, err: (err as Error).message }, 'agent message handler failed');
        return false;
      },
    );
    return new Promise<void>((resolve, reject) => {
      let storeFailed: { readonly error: unknown } | null = null;
      let notStarted = false;
      stored.then(resolve, (error: unknown) => {
        storeFailed = { error };
        if (notStarted) reject(error);
        else
          void started.then((ok) => {
            if (ok)
              this.logger.warn(
                { agentId, messageId: message.messageId, err: (error as Error).message },
                'agent message not stored on JetStream; its run started and is stored',
              );
          });
      });
      void started.then((ok) => {
        if (ok) resolve();
        else {
          notStarted = true;
          if (storeFailed !== null) reject(storeFailed.error);
        }
      });
    });
  }

  /**
   * Delivers an agent's messages, validated, one at a time, to `handler`, with the trace context
   * a message's `traceparent` header carries (null when none or malformed); invalid ones are
   * dropped and counted.
   */
  async consume(
    agentId: string,
    handler: (message: Omit<AgentMessage, 'type'>, trace: TraceContextValues | null) => Promise<Verdict>,
  ): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const durable = `agent_${agentId}`;
    const pullNc = this.#pullConnection === null ? this.nc : await this.#pullConnection(agentId);
    // Opened again (the durable consumer re-created) whenever it ends on its own: an agent
    // never silently stops taking its messages.
    const open = async () => {
      await jsm.consumers.add(AGENT_STREAM, {
        durable_name: durable,
        filter_subject: subject('agent', agentId, 'message'),
        ack_policy: AckPolicy.Explicit,
        ack_wait: ACK_WAIT_MS * NS_PER_MS,
      });
      const consumer = await jetstream(pullNc).consumers.get(AGENT_STREAM, durable);
      // A consumer deleted under it ends the loop (the client's default waits for someone else
      // to re-create it), and `open` re-creates it.
      return consumer.consume({
        max_messages: 16,
        expires: AGENT_PULL_EXPIRES_MS,
        abort_on_missing_resource: true,
      });
    };
    const consumer = await consumeForever({
      open,
      onMessage: async (m) => {
        const decoded = decodeEnvelope(m.data, RUNTIME_KINDS, MAX_MESSAGE_BYTES, ACCEPT);
        if (!decoded.ok) {
          this.#invalid++;
          this.logger.warn(
            { agentId, reason: decoded.reason, bytes: m.data.byteLength },
            'invalid agent message dropped',
          );
          m.term();
          return;
        }
        let verdict: Verdict;
        try {
          verdict = await handler(
            decoded.envelope.payload as Omit<AgentMessage, 'type'>,
            readTraceHeaders(m.headers),
          );
        } catch (err) {
          this.logger.error({ agentId, err: (err as Error).message }, 'agent message handler failed');
          verdict = 'nak';
        }
        try {
          if (verdict === 'ack') m.ack();
          else if (verdict === 'term') m.term();
          else m.nak(1000);
        } catch {
          // Connection closing: an unacknowledged message is redelivered later.
        }
      },
      logger: this.logger,
      what: 'the agent queue consumer',
      fields: { agentId },
    });
    this.#stops.push(() => consumer.stop());
  }

  /** Stops every consumer loop (unacknowledged messages stay in the stream). */
  async stop(): Promise<void> {
    await Promise.all(this.#stops.splice(0).map((s) => s()));
  }
}
