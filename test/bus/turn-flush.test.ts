import net from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  BusError,
  connectBus,
  defineKinds,
  subject,
  type Bus,
  type EmbeddedNats,
  type Subject,
} from '../../runtime/bus/index.ts';
import { flushOncePerTurn } from '../../runtime/bus/turn-flush.ts';
import { eventually, startTestNats } from './helpers.ts';

const kinds = defineKinds({
  'order.step': z.strictObject({ i: z.number().int() }),
});
type Kinds = typeof kinds;

/** The step number carried by a message the observer saw (bus envelope or plain text). */
function stepOf(data: Uint8Array): number {
  const text = new TextDecoder().decode(data);
  if (text.startsWith('{')) {
    const parsed = JSON.parse(text) as { payload?: { i?: number }; i?: number };
    return parsed.payload?.i ?? parsed.i ?? -1;
  }
  return Number(text);
}

describe('one socket write per event-loop turn (real nats-server)', () => {
  let nats: EmbeddedNats;
  let cleanup: () => Promise<void>;
  let observer: NatsConnection;
  const buses: Bus<Kinds>[] = [];
  let n = 0;
  const fresh = (): string => `order${++n}`;

  const openBus = async (): Promise<Bus<Kinds>> => {
    const bus = await connectBus({ target: nats.target(), kinds, source: `turn-flush-${buses.length}` });
    buses.push(bus);
    return bus;
  };

  /** Everything the observer receives on `test.<topic>.>`, in arrival order. */
  const observe = async (topic: string): Promise<number[]> => {
    const seen: number[] = [];
    observer.subscribe(`${subject('test', topic, 'x').slice(0, -2)}.>`, {
      callback: (_err, msg) => void seen.push(stepOf(msg.data)),
    });
    await observer.flush();
    return seen;
  };

  beforeAll(async () => {
    ({ nats, cleanup } = await startTestNats());
    const creds = nats.target().credentials as { token: string };
    observer = await connect({ servers: nats.url, token: creds.token });
  }, 60_000);

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    for (const b of buses) await b.close().catch(() => {});
    await observer?.close().catch(() => {});
    await cleanup?.();
  });

  it('switches the pinned client, and leaves an unknown client unchanged', async () => {
    const bus = await openBus();
    // Already switched by connectBus; a second call answers true and changes nothing more.
    expect(flushOncePerTurn(bus.nats)).toBe(true);
    const lookalike = { protocol: { sendCommand: () => {}, flushPending: () => {}, close: async () => {} } };
    expect(flushOncePerTurn(lookalike as unknown as NatsConnection)).toBe(false);
    expect(flushOncePerTurn({} as unknown as NatsConnection)).toBe(false);
  });

  it('writes publishes separated by awaits in one turn as one socket write', async () => {
    const bus = await openBus();
    const topic = fresh();
    const seen = await observe(topic);
    const s = subject('test', topic, 'events');
    await bus.flush();
    const writes: string[] = [];
    const write = net.Socket.prototype.write;
    vi.spyOn(net.Socket.prototype, 'write').mockImplementation(function (
      this: net.Socket,
      chunk: unknown,
      ...rest: unknown[]
    ) {
      const text = Buffer.from(chunk as Uint8Array).toString('latin1');
      if (text.includes('PUB snotra.')) writes.push(text);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    });
    for (let i = 0; i < 20; i++) {
      bus.publish(s, 'order.step', { i });
      await Promise.resolve(); // each one its own microtask checkpoint: a write each before
    }
    expect(writes).toHaveLength(0); // nothing written within the turn
    expect(await eventually(() => seen.length === 20, 5000)).toBe(true);
    vi.restoreAllMocks();
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('PUB snotra.').length - 1).toBe(20);
    expect(seen).toEqual([...Array(20).keys()]);
  });

  it('keeps the order of core publishes, requests and JetStream publishes on one connection', async () => {
    const bus = await openBus();
    const topic = fresh();
    const seen = await observe(topic);
    const reqSubject = subject('test', topic, 'req');
    // The responder is on the observer's connection, after its wildcard subscription saw the request.
    observer.subscribe(reqSubject, {
      callback: (_err, msg) => void msg.respond(JSON.stringify({ i: -1 })),
    });
    await observer.flush();
    const jsm = await jetstreamManager(bus.nats);
    const jsSubject = subject('test', topic, 'js');
    await jsm.streams.add({ name: `ORDER_${topic}`, subjects: [jsSubject] });
    const js = jetstream(bus.nats);
    const events: Subject = subject('test', topic, 'events');
    const pending: Promise<unknown>[] = [];
    for (let round = 0; round < 5; round++) {
      const base = round * 4;
      bus.publish(events, 'order.step', { i: base });
      await Promise.resolve();
      pending.push(js.publish(jsSubject, String(base + 1)));
      await Promise.resolve();
      // A request's reply comes back as a bus error envelope (the responder answers plain JSON),
      // which the bus refuses as invalid: the message order on the wire is what is checked here.
      pending.push(
        bus.request(reqSubject, 'order.step', { i: base + 2 }, { expect: 'order.step' }).catch(() => {}),
      );
      await Promise.resolve();
      bus.nats.publish(subject('test', topic, 'raw'), String(base + 3));
      await Promise.resolve();
    }
    await Promise.all(pending);
    expect(await eventually(() => seen.length === 20, 5000)).toBe(true);
    expect(seen).toEqual([...Array(20).keys()]);
    const info = await jsm.streams.info(`ORDER_${topic}`);
    expect(info.state.messages).toBe(5);
  });

  it('loses nothing published right before close() or a raw close of the connection', async () => {
    for (const how of ['bus.close', 'nats.close', 'nats.drain'] as const) {
      const bus = await openBus();
      const topic = fresh();
      const seen = await observe(topic);
      const s = subject('test', topic, 'events');
      for (let i = 0; i < 200; i++) {
        bus.publish(s, 'order.step', { i });
        if (i % 10 === 0) await Promise.resolve();
      }
      if (how === 'bus.close') await bus.close();
      else if (how === 'nats.close') await bus.nats.close();
      else await bus.nats.drain();
      expect(await eventually(() => seen.length === 200, 5000), how).toBe(true);
      expect(seen, how).toEqual([...Array(200).keys()]);
    }
  });

  it('still throws a publish error in the caller', async () => {
    const bus = await openBus();
    const s = subject('test', fresh(), 'events');
    await bus.close();
    let caught: unknown;
    try {
      bus.publish(s, 'order.step', { i: 1 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BusError);
    expect((caught as BusError).code).toBe('bus_closed');
  });
});
