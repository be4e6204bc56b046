import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelegramAdapter } from '../../surfaces/platforms/telegram.ts';
import { FakeTelegram } from './fake-telegram.ts';

const TOKEN = `123456789:AAH${'k'.repeat(20)}-fake_${Math.random().toString(36).slice(2)}`;
let fake: FakeTelegram;
beforeAll(async () => {
  fake = await FakeTelegram.start(TOKEN);
});
afterAll(async () => {
  await fake.close();
});

describe('Telegram adapter against the fake Bot API', () => {
  it('long-polls getUpdates with offset and timeout; a later offset confirms what came before', async () => {
    const adapter = new TelegramAdapter({ token: TOKEN, apiBase: fake.url, pollTimeoutS: 10 });
    const signal = new AbortController().signal;
    const waiting = adapter.receive(0, signal);
    setTimeout(() => fake.push(42, 'first'), 100);
    const [u] = await waiting;
    expect(u).toMatchObject({ message: { chatId: 42, chatType: 'private', text: 'first', messageId: 1 } });
    expect(u?.message?.sender).toBe('Ada (@ada)');
    // Same offset again: the update is still there (not confirmed).
    expect((await adapter.receive(0, signal)).map((x) => x.updateId)).toEqual([u?.updateId]);
    expect(fake.unconfirmed).toBe(1);
    fake.push(42, 'second');
    const next = await adapter.receive((u?.updateId ?? 0) + 1, signal);
    expect(next.map((x) => x.message?.text)).toEqual(['second']);
    expect(fake.unconfirmed).toBe(1);
    expect(fake.offsets.slice(-1)[0]).toBe((u?.updateId ?? 0) + 1);
  });

  it('sendMessage: ok gives the message id; over 4096 characters is the API error, not sent, not retried', async () => {
    const adapter = new TelegramAdapter({ token: TOKEN, apiBase: fake.url });
    const signal = new AbortController().signal;
    const ok = await adapter.send(42, 'hello', signal);
    expect(ok).toMatchObject({ status: 'sent' });
    const long = await adapter.send(42, 'x'.repeat(4097), signal);
    expect(long).toEqual({
      status: 'not_sent',
      error: 'telegram sendMessage: 400 Bad Request: message is too long',
    });
    const empty = await adapter.send(42, '   ', signal);
    expect(empty).toMatchObject({
      status: 'not_sent',
      error: expect.stringContaining('message text is empty'),
    });
    expect(fake.to(42).map((m) => m.text)).toEqual(['hello']);
  });

  it('a wrong token is a 401 error that names the cause and never the token or the URL', async () => {
    const wrong = `${TOKEN}x`;
    const adapter = new TelegramAdapter({ token: wrong, apiBase: fake.url });
    const err = (await adapter.receive(0, new AbortController().signal).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('401 Unauthorized');
    expect(err.message).toContain('bot token was refused');
    expect(err.message).not.toContain(TOKEN);
    expect(err.message).not.toContain('/bot');
    expect(err.message).not.toContain(fake.url);
    const send = await adapter.send(42, 'x', new AbortController().signal);
    expect(JSON.stringify(send)).not.toContain(TOKEN);
  });

  it('network failures (refused, unreachable, reset) say only a code: fetch errors that hold the URL never escape', async () => {
    // A port with nothing listening.
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const refused = new TelegramAdapter({ token: TOKEN, apiBase: `http://127.0.0.1:${port}` });
    const err = (await refused.receive(0, new AbortController().signal).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('telegram getUpdates: request failed (ECONNREFUSED)');
    expect(await refused.send(1, 'x', new AbortController().signal)).toEqual({
      status: 'not_sent',
      error: 'telegram sendMessage: request failed (ECONNREFUSED)',
      retryAfterMs: 2000,
    });
    // A server that accepts and then cuts the connection: the request may have arrived.
    const cutter = createServer((s) => s.once('data', () => s.destroy()));
    await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', r));
    const cut = new TelegramAdapter({
      token: TOKEN,
      apiBase: `http://127.0.0.1:${(cutter.address() as { port: number }).port}`,
    });
    const outcome = await cut.send(1, 'x', new AbortController().signal);
    expect(outcome.status).toBe('unknown');
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
    await new Promise<void>((r) => cutter.close(() => r()));
  });
  it('each request has a connection of its own: a server closing idle keep-alive connections loses no reply', async () => {
    // The keep-alive race at its worst: a request that comes on a connection already used is
    // cut without an answer, as when a server closes an idle connection just as a request goes
    // out. A pooled client would see "no answer" (unknown, not resent: a lost reply).
    const seen = new WeakMap<object, number>();
    const connectionHeaders: string[] = [];
    let accepted = 0;
    const server = createHttpServer((req, res) => {
      const n = (seen.get(req.socket) ?? 0) + 1;
      seen.set(req.socket, n);
      connectionHeaders.push(String(req.headers.connection));
      if (n > 1) return void req.socket.destroy();
      req.resume();
      req.on('end', () => {
        accepted++;
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' });
        res.end(JSON.stringify({ ok: true, result: { message_id: accepted } }));
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const adapter = new TelegramAdapter({
        token: TOKEN,
        apiBase: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      });
      const outcomes = [];
      for (let i = 0; i < 20; i++)
        outcomes.push(await adapter.send(7, `m${i}`, new AbortController().signal));
      expect(outcomes.map((o) => o.status)).toEqual(Array(20).fill('sent'));
      expect(accepted).toBe(20);
      expect(new Set(connectionHeaders)).toEqual(new Set(['close']));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('an answer larger than the bound is refused unread, by its declared length or by what arrives', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    for (const declare of [true, false]) {
      const server = createHttpServer((req, res) => {
        req.resume();
        res.writeHead(200, declare ? { 'content-length': String(big.length + 2) } : {});
        res.end(`"${big}"`);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const adapter = new TelegramAdapter({
          token: TOKEN,
          apiBase: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
        });
        expect(await adapter.send(7, 'x', new AbortController().signal)).toEqual({
          status: 'not_sent',
          error: 'telegram sendMessage: 200 answer too large',
        });
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    }
  });
});
