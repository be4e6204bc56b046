import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectBus, defineKinds } from '../../runtime/bus/index.ts';
import { checkTarget } from '../../runtime/bus/target.ts';

const kinds = defineKinds({});

describe('bus targets', () => {
  it('accepts nats:// and tls:// URLs with token or user/pass credentials', () => {
    expect(checkTarget({ url: 'nats://127.0.0.1:4222', credentials: { token: 't' } })).toMatchObject({
      servers: ['nats://127.0.0.1:4222'],
      cleartextRemote: false,
    });
    expect(
      checkTarget({ url: ['tls://nats.example:4222'], credentials: { user: 'u', pass: 'p' } })
        .cleartextRemote,
    ).toBe(false);
    expect(
      checkTarget({ url: 'nats://nats.example:4222', credentials: { token: 't' } }).cleartextRemote,
    ).toBe(true);
  });

  it.each([
    ['http://127.0.0.1:4222', undefined],
    ['nats://user:hunter2@127.0.0.1:4222', undefined],
    ['nats://127.0.0.1:4222/path', undefined],
    ['not a url', undefined],
    ['nats://127.0.0.1:4222', { token: '' }],
    ['nats://127.0.0.1:4222', { token: 'hunter2', user: 'u' }],
  ])('rejects %s with %j without echoing credentials', (url, credentials) => {
    let err: unknown;
    try {
      checkTarget({ url, credentials: credentials as { token: string } | undefined });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'bus_invalid_target' });
    expect((err as Error).message).not.toContain('hunter2');
  });

  it('an unreachable server is bus_connect_failed', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    await new Promise((r) => srv.close(r));
    const err = await connectBus({
      target: { url: `nats://127.0.0.1:${port}`, credentials: { token: 'secret-token-value' } },
      kinds,
      source: 'test',
      reconnect: false,
      connectTimeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bus_connect_failed' });
    expect((err as Error).message).not.toContain('secret-token-value');
  });
});
