import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunFeedEvent } from '../../runtime/events.ts';
import { EventHub } from '../../surfaces/sidecar/hub.ts';
import { SSE_LAG_BYTES, serveEvents } from '../../surfaces/sidecar/sse.ts';
import { until } from './client.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

const text = (i: number, delta = `${i} ${'x'.repeat(16_000)}`): RunFeedEvent => ({
  type: 'model.text',
  delta,
  runId: 'a:1',
  ts: 0,
  agentId: 'a',
  parentRunId: null,
});

describe('SSE over a real socket', () => {
  it('a client that stops reading is sent one error event and closed, and its slot is released', async () => {
    const hub = new EventHub(10, (v) => v);
    let released = 0;
    server = createServer((req, res) => serveEvents(req, res, hub, {}, () => (released += 1)));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let received = '';
    let ended = false;
    const req = get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.once('data', (d) => {
        received += String(d);
        res.pause(); // a stuck tab: reads nothing more
      });
      res.on('end', () => (ended = true));
    });
    req.on('error', () => {});
    await until(() => received.length > 0, 10_000, 'the stream open');
    // Publish far more than the kernel buffers plus the lag bound hold.
    for (let i = 0; i < Math.ceil((SSE_LAG_BYTES * 4) / 16_000); i += 1) hub.publish(text(i));
    await until(() => released === 1, 20_000, 'the lagging client closed');
    // The client, reading again, finds the error event at the end of what was queued.
    req.socket?.resume();
    const res = (req as unknown as { res: NodeJS.ReadableStream }).res;
    res.on('data', (d) => (received += String(d)));
    res.resume();
    await until(() => ended, 20_000, 'the stream end');
    expect(received).toContain('event: error');
    expect(received.match(/event: error/g)).toHaveLength(1);
    expect(received).toContain('"code":"client_lagging"');
  }, 60_000);

  it('Last-Event-ID replays only what is buffered after it, in order', async () => {
    const hub = new EventHub(3, (v) => v);
    for (let i = 1; i <= 5; i += 1) hub.publish(text(i, `e${i}`));
    expect(hub.since(null)).toEqual([]);
    expect(hub.since(3).map((e) => e.seq)).toEqual([4, 5]);
    expect(hub.since(0).map((e) => e.seq)).toEqual([3, 4, 5]);
  });
});
