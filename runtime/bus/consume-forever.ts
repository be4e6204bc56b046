import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { BusLogger } from './logger.ts';

/** How long a consumer that ended waits before it is opened again. */
const REOPEN_AFTER_MS = 500;

/** A consumer loop that `consumeForever` keeps open; `stop` ends it for good. */
export interface ForeverConsumer {
  stop(): Promise<void>;
}

/**
 * Delivers the messages of a JetStream pull consumer to `onMessage` (awaited: a handler that
 * wants several at once returns before its work is done) and opens the consumer again whenever
 * its iterator ends or throws on its own — its server died, its leader moved, it was deleted —
 * until `stop`. A runtime never silently stops taking messages. `open` may also (re)create the
 * durable consumer; it is called again after each end, every `REOPEN_AFTER_MS` while it fails.
 */
export async function consumeForever(options: {
  readonly open: () => Promise<ConsumerMessages>;
  readonly onMessage: (m: JsMsg) => void | Promise<void>;
  readonly logger: BusLogger;
  /** Names the consumer in log lines, e.g. "the resume consumer". */
  readonly what: string;
  /** Log fields (ids) of every line. */
  readonly fields?: Record<string, unknown>;
}): Promise<ForeverConsumer> {
  const { logger, what, fields = {} } = options;
  let messages: ConsumerMessages | null = await options.open();
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    for (;;) {
      try {
        if (messages !== null) for await (const m of messages) await options.onMessage(m);
      } catch (err) {
        if (!stopped) logger.warn({ ...fields, err: (err as Error).message }, `${what} failed`);
      }
      if (stopped) return;
      logger.warn(fields, `${what} ended; opening it again`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, REOPEN_AFTER_MS).unref();
      });
      if (stopped) return;
      try {
        messages = await options.open();
      } catch (err) {
        messages = null;
        logger.warn({ ...fields, err: (err as Error).message }, `${what} could not be opened; retrying`);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await Promise.resolve(messages?.close()).catch(() => {});
      await loop.catch(() => {});
    },
  };
}
