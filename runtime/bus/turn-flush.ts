import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The parts of the nats.js 3.4 protocol handler this module relies on (not public API; checked
 * at run time by {@link flushOncePerTurn} before anything is changed).
 */
interface ProtocolInternals {
  outbound: {
    length(): number;
    size(): number;
    fill(first: Uint8Array, ...rest: Uint8Array[]): void;
  };
  pendingLimit: number;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  flushPending(): void;
  close(err?: Error): Promise<void>;
}

const encoder = new TextEncoder();

/** Connections already switched, so a second call is a no-op that answers true. */
const switched = new WeakSet<object>();

/**
 * Makes `nc` write everything it sends within one event-loop turn to its socket at once, in a
 * `setImmediate` at the end of the turn, instead of once per microtask checkpoint (nats.js
 * queues a flush in a microtask whenever its outbound buffer was empty, so every publish
 * separated by an `await` was its own socket write).
 *
 * What stays as it was:
 * - **Order.** Every command of the connection (core publishes, the messages of requests and
 *   JetStream publishes, SUB/UNSUB, PING) still goes through the client's one outbound buffer in
 *   the order it was issued; only the moment that buffer is handed to the socket moves.
 * - **Errors.** Publish and request checks (closed connection, payload size, subject) still
 *   throw or reject synchronously in the caller; socket write errors were never reported per
 *   message by the client and still end the connection the same way.
 * - **Nothing left behind.** `flush()` and `drain()` still write the buffer at once (they hand
 *   it to the socket inline, with their PING behind it), a buffer past the client's
 *   `pendingLimit` is still written inline, and `close()` writes what is buffered before the
 *   socket is closed.
 *
 * Returns false, changing nothing, when the client's internals are not the ones this was written
 * against (another nats.js version): the connection then works as before, only with more writes.
 */
export function flushOncePerTurn(nc: NatsConnection): boolean {
  const ph = (nc as unknown as { protocol?: unknown }).protocol;
  if (typeof ph === 'object' && ph !== null && switched.has(ph)) return true;
  if (!isProtocolInternals(ph)) return false;
  let scheduled = false;
  const flushNow = (): void => {
    scheduled = false;
    ph.flushPending();
  };
  ph.sendCommand = function sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void {
    const wasEmpty = ph.outbound.length() === 0;
    ph.outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (ph.outbound.size() >= ph.pendingLimit) {
      ph.flushPending();
    } else if (wasEmpty && !scheduled) {
      scheduled = true;
      setImmediate(flushNow);
    }
  };
  const close = ph.close.bind(ph);
  ph.close = (err?: Error): Promise<void> => {
    ph.flushPending();
    return close(err);
  };
  switched.add(ph);
  return true;
}

/** True when `ph` has the shape (and the microtask flush) of the nats.js 3.4 protocol handler. */
function isProtocolInternals(ph: unknown): ph is ProtocolInternals {
  if (typeof ph !== 'object' || ph === null) return false;
  const p = ph as Partial<Record<keyof ProtocolInternals, unknown>>;
  const out = p.outbound as Partial<Record<keyof ProtocolInternals['outbound'], unknown>> | undefined;
  if (
    typeof p.sendCommand !== 'function' ||
    typeof p.flushPending !== 'function' ||
    typeof p.close !== 'function' ||
    typeof p.pendingLimit !== 'number' ||
    typeof out !== 'object' ||
    out === null ||
    typeof out.length !== 'function' ||
    typeof out.size !== 'function' ||
    typeof out.fill !== 'function'
  ) {
    return false;
  }
  // The function replaced must be the one described above: it fills `outbound`, flushes in a
  // microtask when the buffer was empty and inline past `pendingLimit`.
  const source = Function.prototype.toString.call(p.sendCommand);
  return (
    source.includes('outbound.fill') &&
    source.includes('queueMicrotask') &&
    source.includes('pendingLimit') &&
    source.includes('flushPending')
  );
}
