import { RequestOne } from '@nats-io/transport-node/lib/nats-base-client.js';

/** The parts of the nats.js 3.4 single-reply request this module relies on (not public API). */
interface RequestInternals {
  timer?: { cancel(): void };
  deferred: { resolve(value: unknown): void };
  mux: { cancel(request: unknown): void };
}

type Resolver = (this: RequestInternals, err: Error | null, msg: unknown) => void;

let state: 'untried' | 'switched' | 'left' = 'untried';

/**
 * Stops the NATS client from building an `Error` (with its stack) for every request that
 * succeeds. In nats.js 3.4 a reply resolves the request, then `cancel()` rejects the already
 * resolved promise with a new `RequestError("cancelled")` — a no-op, but one stack capture per
 * request, and every JetStream publish is a request. A successful reply now does what that
 * `cancel()` does besides the rejection (stop the timer, leave the mux table); an error reply,
 * a timeout and an explicit cancel take the client's own code, unchanged.
 *
 * Process-wide (the client is one module) and idempotent. Returns false, changing nothing, when
 * the client's request code is not the one this was written against (another nats.js version).
 */
export function settleRequestsQuietly(): boolean {
  if (state !== 'untried') return state === 'switched';
  const proto = (RequestOne as unknown as { prototype?: Record<string, unknown> }).prototype;
  const resolver = proto?.resolver;
  const cancel = proto?.cancel;
  if (proto === undefined || typeof resolver !== 'function' || typeof cancel !== 'function') {
    state = 'left';
    return false;
  }
  const resolverSource = Function.prototype.toString.call(resolver);
  const cancelSource = Function.prototype.toString.call(cancel);
  const expected =
    resolverSource.includes('this.deferred.resolve(msg)') &&
    resolverSource.includes('this.cancel()') &&
    cancelSource.includes('this.mux.cancel(this)') &&
    cancelSource.includes('"cancelled"');
  if (!expected) {
    state = 'left';
    return false;
  }
  const original = resolver as Resolver;
  proto.resolver = function resolve(this: RequestInternals, err: Error | null, msg: unknown): void {
    if (err) {
      original.call(this, err, msg);
      return;
    }
    this.timer?.cancel();
    this.deferred.resolve(msg);
    this.mux.cancel(this);
  } satisfies Resolver;
  state = 'switched';
  return true;
}
