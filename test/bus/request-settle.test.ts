import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { RequestOne } from '@nats-io/transport-node/lib/nats-base-client.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { connectBus, defineKinds, subject, type Bus, type EmbeddedNats } from '../../runtime/bus/index.ts';
import { settleRequestsQuietly } from '../../runtime/bus/request-settle.ts';
import { startTestNats } from './helpers.ts';

const kinds = defineKinds({
  'calc.add': z.strictObject({ a: z.number(), b: z.number() }),
  'calc.sum': z.strictObject({ sum: z.number() }),
});
type Kinds = typeof kinds;

/** The client's table of requests waiting for a reply (each must leave it, whatever the outcome). */
const waiting = (bus: Bus<Kinds>): number =>
  (
    bus.nats as unknown as { protocol: { muxSubscriptions: { size(): number } } }
  ).protocol.muxSubscriptions.size();

describe('a successful request builds no cancel error (real nats-server)', () => {
  let nats: EmbeddedNats;
  let cleanup: () => Promise<void>;
  let bus: Bus<Kinds>;
  let n = 0;
  const fresh = () => subject('test', `settle${++n}`, 'calc');

  beforeAll(async () => {
    ({ nats, cleanup } = await startTestNats());
    bus = await connectBus({ target: nats.target(), kinds, source: 'request-settle' });
  }, 60_000);

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await bus?.close();
    await cleanup?.();
  });

  it('is switched on the pinned client', () => {
    expect(settleRequestsQuietly()).toBe(true);
  });

  it('resolves replies and JetStream acks without calling cancel, and leaves no request waiting', async () => {
    const s = fresh();
    bus.subscribe(s, 'calc.add', (env, ctx) => ctx.reply('calc.sum', { sum: env.payload.a + env.payload.b }));
    await bus.flush();
    const jsm = await jetstreamManager(bus.nats);
    const jsSubject = subject('test', `settle${n}`, 'js');
    await jsm.streams.add({ name: `SETTLE_${n}`, subjects: [jsSubject] });
    const js = jetstream(bus.nats);
    const cancel = vi.spyOn(RequestOne.prototype, 'cancel');
    const sums = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        bus.request(s, 'calc.add', { a: i, b: 1 }, { expect: 'calc.sum' }).then((r) => r.payload.sum),
      ),
    );
    expect(sums).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const acks = [];
    for (let i = 0; i < 5; i++) acks.push(await js.publish(jsSubject, String(i)));
    expect(acks.map((a) => a.seq)).toEqual([1, 2, 3, 4, 5]);
    // The client's own code would call cancel() once per reply (and build a RequestError there).
    expect(cancel).not.toHaveBeenCalled();
    expect(waiting(bus)).toBe(0);
  });

  it('still fails a request without responders or past its timeout, and forgets it', async () => {
    const none = await bus
      .request(fresh(), 'calc.add', { a: 1, b: 1 }, { expect: 'calc.sum' })
      .catch((e: unknown) => e);
    expect(none).toMatchObject({ code: 'bus_no_responders' });
    const s = fresh();
    bus.subscribe(s, 'calc.add', () => {});
    await bus.flush();
    const slow = await bus
      .request(s, 'calc.add', { a: 1, b: 1 }, { expect: 'calc.sum', timeoutMs: 100 })
      .catch((e: unknown) => e);
    expect(slow).toMatchObject({ code: 'bus_request_timeout' });
    expect(waiting(bus)).toBe(0);
  });
});
