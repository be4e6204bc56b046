import { connect, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BusError,
  connectBus,
  defineKinds,
  InvalidReason,
  subject,
  subjectPattern,
  Wildcard,
  type Bus,
  type BusLogger,
  type EmbeddedNats,
  type Envelope,
  type Subject,
} from '../../runtime/bus/index.ts';
import { eventually, startTestNats } from './helpers.ts';

const kinds = defineKinds({
  'chat.message': z.strictObject({ text: z.string().max(2000) }),
  'calc.add': z.strictObject({ a: z.number(), b: z.number() }),
  'calc.sum': z.strictObject({ sum: z.number() }),
});
type Kinds = typeof kinds;

/** Body marker: must never show up in a log line. */
const SECRET_BODY = 'BODY-MARKER-sk-live-0123456789';

function recordingLogger(): BusLogger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: string) => (obj: object, msg: string) =>
    lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

/** A queue of delivered envelopes that tests can await one by one. */
function inbox<T>(): { push: (v: T) => void; next: (timeoutMs?: number) => Promise<T> } {
  const items: T[] = [];
  const waiters: ((v: T) => void)[] = [];
  return {
    push: (v) => {
      const w = waiters.shift();
      if (w) w(v);
      else items.push(v);
    },
    next: (timeoutMs = 2000) =>
      new Promise<T>((resolve, reject) => {
        const v = items.shift();
        if (v !== undefined) return resolve(v);
        const timer = setTimeout(() => reject(new Error('no message within timeout')), timeoutMs);
        waiters.push((x) => {
          clearTimeout(timer);
          resolve(x);
        });
      }),
  };
}

describe('bus over the embedded server', () => {
  let nats: EmbeddedNats;
  let cleanup: () => Promise<void>;
  let bus: Bus<Kinds>;
  let raw: NatsConnection;
  const logger = recordingLogger();
  let n = 0;
  /** A fresh subject per test, so tests never see each other's messages. */
  const fresh = (): Subject => subject('test', `t${++n}`, 'events');

  beforeAll(async () => {
    ({ nats, cleanup } = await startTestNats());
    bus = await connectBus({
      target: nats.target(),
      kinds,
      source: 'test-bus',
      logger,
      maxMessageBytes: 4096,
    });
    const creds = nats.target().credentials as { token: string };
    raw = await connect({ servers: nats.url, token: creds.token });
  });
  afterAll(async () => {
    await raw.close();
    await bus.close();
    await cleanup();
  });

  it('round-trips a valid envelope', async () => {
    const s = fresh();
    const got = inbox<Envelope>();
    bus.subscribe(s, 'chat.message', (env) => {
      expect(env.payload.text).toBe('hello');
      got.push(env);
    });
    await bus.flush();
    const id = bus.publish(s, 'chat.message', { text: 'hello' });
    const env = await got.next();
    expect(env).toMatchObject({
      v: 1,
      id,
      kind: 'chat.message',
      source: 'test-bus',
      payload: { text: 'hello' },
    });
    expect(new Date(env.ts).toISOString()).toBe(env.ts);
  });

  it('drops invalid messages by reason, logs no body, and keeps delivering', async () => {
    const s = fresh();
    const got = inbox<Envelope>();
    bus.subscribe(s, 'chat.message', (env) => got.push(env));
    await bus.flush();
    const before = bus.stats();
    const good = (text: string) =>
      JSON.stringify({
        v: 1,
        id: `id-${text}`,
        kind: 'chat.message',
        ts: new Date().toISOString(),
        source: 'x',
        payload: { text },
      });
    const envelope = (over: Record<string, unknown>) =>
      JSON.stringify({
        v: 1,
        id: 'i',
        kind: 'chat.message',
        ts: new Date().toISOString(),
        source: 'x',
        payload: { text: SECRET_BODY },
        ...over,
      });
    const cases: [InvalidReason, string | Uint8Array][] = [
      [InvalidReason.InvalidJson, `{"v":1,"payload":"${SECRET_BODY}"`],
      [InvalidReason.InvalidJson, new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])],
      [InvalidReason.UnsupportedVersion, envelope({ v: 2 })],
      [InvalidReason.InvalidEnvelope, JSON.stringify([SECRET_BODY])],
      [InvalidReason.InvalidEnvelope, envelope({ ts: 'yesterday' })],
      [InvalidReason.UnknownKind, envelope({ kind: 'chat.unknown' })],
      [InvalidReason.UnexpectedKind, envelope({ kind: 'calc.add', payload: { a: 1, b: 2 } })],
      [InvalidReason.InvalidPayload, envelope({ payload: { text: SECRET_BODY, extra: 1 } })],
      [InvalidReason.Oversized, envelope({ payload: { text: `${SECRET_BODY}${'x'.repeat(5000)}` } })],
    ];
    for (const [i, [, data]] of cases.entries()) {
      raw.publish(s, data);
      raw.publish(s, good(`after-${i}`));
    }
    for (const [i] of cases.entries()) expect((await got.next()).id).toBe(`id-after-${i}`);
    const after = bus.stats();
    const expected: Partial<Record<InvalidReason, number>> = {};
    for (const [reason] of cases) expected[reason] = (expected[reason] ?? 0) + 1;
    for (const reason of Object.values(InvalidReason)) {
      expect(after.invalid[reason] - before.invalid[reason], reason).toBe(expected[reason] ?? 0);
    }
    const logText = logger.lines.join('\n');
    expect(logText).not.toContain(SECRET_BODY);
    const drop = logger.lines.find((l) => l.includes('"reason":"oversized"'));
    expect(drop).toContain(`"subject":"${s}"`);
    expect(drop).toMatch(/"size":\d+/);
  });

  it('survives a handler that throws or rejects', async () => {
    const s = fresh();
    const got = inbox<string>();
    bus.subscribe(s, 'chat.message', async (env) => {
      if (env.payload.text === 'throw') throw new Error('handler bug');
      if (env.payload.text === 'reject') return Promise.reject(new Error('async handler bug'));
      got.push(env.payload.text);
    });
    await bus.flush();
    const before = bus.stats().handlerErrors;
    bus.publish(s, 'chat.message', { text: 'throw' });
    bus.publish(s, 'chat.message', { text: 'reject' });
    bus.publish(s, 'chat.message', { text: 'still here' });
    expect(await got.next()).toBe('still here');
    expect(bus.stats().handlerErrors - before).toBe(2);
    expect(
      logger.lines.some((l) => l.startsWith('error bus: handler failed') && l.includes('handler bug')),
    ).toBe(true);
  });

  it('delivers to wildcard subscriptions in order, one handler call at a time', async () => {
    const base = `w${++n}`;
    const seen: string[] = [];
    let active = 0;
    let maxActive = 0;
    const done = inbox<true>();
    bus.subscribe(subjectPattern('test', base, Wildcard.Rest), 'chat.message', async (env, ctx) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 1));
      seen.push(`${ctx.subject}:${env.payload.text}`);
      active--;
      if (seen.length === 20) done.push(true);
    });
    await bus.flush();
    for (let i = 0; i < 20; i++)
      bus.publish(subject('test', base, `s${i % 3}`), 'chat.message', { text: String(i) });
    await done.next();
    expect(maxActive).toBe(1);
    expect(seen.map((x) => Number(x.split(':')[1]))).toEqual([...Array(20).keys()]);
  });

  it('request/reply with validated, typed envelopes', async () => {
    const s = fresh();
    bus.subscribe(s, 'calc.add', (env, ctx) => {
      expect(ctx.canReply).toBe(true);
      ctx.reply('calc.sum', { sum: env.payload.a + env.payload.b });
    });
    await bus.flush();
    const reply = await bus.request(s, 'calc.add', { a: 2, b: 3 }, { expect: 'calc.sum' });
    expect(reply.kind).toBe('calc.sum');
    expect(reply.payload.sum).toBe(5);
  });

  it('a failing responder answers with bus.error; the requester gets bus_request_failed', async () => {
    const s = fresh();
    bus.subscribe(s, 'calc.add', () => {
      throw Object.assign(new Error('nope'), { code: 'calc_overflow' });
    });
    await bus.flush();
    const err = await bus
      .request(s, 'calc.add', { a: 1, b: 1 }, { expect: 'calc.sum' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bus_request_failed', details: { remoteCode: 'calc_overflow' } });
  });

  it('an invalid request gets a bus.error reply naming the reason', async () => {
    const s = fresh();
    bus.subscribe(s, 'calc.add', (_env, ctx) => ctx.reply('calc.sum', { sum: 0 }));
    await bus.flush();
    const msg = await raw.request(s, '{"broken', { timeout: 2000 });
    expect(msg.json()).toMatchObject({ v: 1, kind: 'bus.error', payload: { code: 'invalid_json' } });
  });

  it('a reply of the wrong kind is bus_invalid_reply and counted', async () => {
    const s = fresh();
    bus.subscribe(s, 'calc.add', (_env, ctx) => ctx.reply('chat.message', { text: 'not a sum' }));
    await bus.flush();
    const before = bus.stats().invalid.unexpected_kind;
    const err = await bus
      .request(s, 'calc.add', { a: 1, b: 1 }, { expect: 'calc.sum' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bus_invalid_reply', details: { reason: 'unexpected_kind' } });
    expect(bus.stats().invalid.unexpected_kind - before).toBe(1);
  });

  it('request errors: no responders, timeout', async () => {
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
  });

  it('refuses to publish invalid, oversized or unregistered envelopes without echoing values', () => {
    const s = fresh();
    const invalid = (() => {
      try {
        bus.publish(s, 'chat.message', { text: 42 } as unknown as { text: string });
      } catch (e) {
        return e;
      }
    })();
    expect(invalid).toMatchObject({ code: 'bus_invalid_payload' });
    expect(() =>
      bus.publish(s, 'chat.message', { text: 'x'.repeat(2000), extra: SECRET_BODY } as never),
    ).toThrow(
      expect.objectContaining({
        code: 'bus_invalid_payload',
        message: expect.not.stringContaining(SECRET_BODY),
      }),
    );
    expect(() => bus.publish(s, 'chat.message', { text: 'y'.repeat(2000) })).not.toThrow();
    expect(() => bus.publish(s, 'nope.kind' as 'chat.message', { text: 'a' })).toThrow(
      expect.objectContaining({ code: 'bus_unknown_kind' }),
    );
    expect(() => bus.publish('snotra.v1.a.*' as Subject, 'chat.message', { text: 'a' })).toThrow(
      expect.objectContaining({ code: 'bus_invalid_subject' }),
    );
    expect(() => bus.publish('other.subject' as Subject, 'chat.message', { text: 'a' })).toThrow(BusError);
  });

  it('refuses envelopes over maxMessageBytes on send', async () => {
    const small = await connectBus({ target: nats.target(), kinds, source: 'small', maxMessageBytes: 300 });
    expect(() => small.publish(fresh(), 'chat.message', { text: 'z'.repeat(400) })).toThrow(
      expect.objectContaining({ code: 'bus_payload_too_large' }),
    );
    await small.close();
    expect(() => small.publish(fresh(), 'chat.message', { text: 'late' })).toThrow(
      expect.objectContaining({ code: 'bus_closed' }),
    );
  });

  it('works with a pino logger and writes no body into it', async () => {
    const out: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk.toString());
        cb();
      },
    });
    const log: BusLogger = pino({ level: 'debug' }, sink);
    const b = await connectBus({ target: nats.target(), kinds, source: 'pino', logger: log });
    const s = fresh();
    b.subscribe(s, 'chat.message', () => {});
    await b.flush();
    raw.publish(s, JSON.stringify({ v: 9, body: SECRET_BODY }));
    expect(await eventually(() => b.stats().invalid.unsupported_version === 1, 2000)).toBe(true);
    await b.close();
    const text = out.join('');
    expect(text).toContain('dropped invalid message');
    expect(text).toContain('unsupported_version');
    expect(text).not.toContain(SECRET_BODY);
  });

  it('close() drains: messages already delivered to the subscription are handled', async () => {
    const b = await connectBus({ target: nats.target(), kinds, source: 'drain' });
    const s = fresh();
    let handled = 0;
    b.subscribe(s, 'chat.message', async () => {
      await new Promise((r) => setTimeout(r, 2));
      handled++;
    });
    await b.flush();
    for (let i = 0; i < 10; i++) b.publish(s, 'chat.message', { text: String(i) });
    await b.flush();
    await b.close();
    expect(handled).toBe(10);
  });
});

describe('bus typing', () => {
  it('types payloads by kind (checked by tsc)', () => {
    // Never called: the assertions are the @ts-expect-error lines, verified by `tsc --noEmit`.
    const typed = (b: Bus<Kinds>, s: Subject): void => {
      b.publish(s, 'calc.add', { a: 1, b: 2 });
      // @ts-expect-error wrong payload for the kind
      b.publish(s, 'calc.add', { a: '1', b: 2 });
      // @ts-expect-error unregistered kind
      b.publish(s, 'calc.mul', { a: 1, b: 2 });
      // @ts-expect-error a plain string is not a Subject
      b.publish('snotra.v1.x', 'calc.add', { a: 1, b: 2 });
      b.subscribe(s, ['calc.add', 'chat.message'], (env) => {
        if (env.kind === 'calc.add') void (env.payload.a + env.payload.b);
        // @ts-expect-error narrowed: chat.message has no `a`
        else void env.payload.a;
      });
    };
    expect(typeof typed).toBe('function');
  });
});
