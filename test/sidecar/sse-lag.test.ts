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

  it('a Last-Event-ID older than the buffer, or one this hub never gave, gets one replay_gap error first', async () => {
    const hub = new EventHub(3, (v) => v);
    for (let i = 1; i <= 5; i += 1) hub.publish(text(i, `e${i}`));
    server = createServer((req, res) => serveEvents(req, res, hub, {}, () => {}));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let next = 6;
    /** Connects with Last-Event-ID `last`, publishes one live event, reads until it arrives. */
    const read = (last: string) =>
      new Promise<string>((resolve, reject) => {
        const seq = next++;
        const req = get(
          { host: '127.0.0.1', port, path: '/', agent: false, headers: { 'Last-Event-ID': last } },
          (res) => {
            let got = '';
            res.on('data', (d) => {
              got += String(d);
              if (got.includes(`id: ${seq}\n`)) {
                req.destroy();
                resolve(got);
              }
            });
            hub.publish(text(seq, `e${seq}`));
          },
        );
        req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
      });
    const ids = (t: string) => [...t.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    // Events 2 and 3 are gone from a buffer of 3 that holds 3, 4, 5: the client is told.
    const gap = await read('1');
    expect(gap.match(/event: error/g)).toHaveLength(1);
    expect(gap).toContain('"code":"replay_gap"');
    expect(gap.indexOf('replay_gap')).toBeLessThan(gap.indexOf('id: '));
    expect(ids(gap)).toEqual([3, 4, 5, 6]);
    // The benign look-alikes: the oldest buffered event (4, of 4, 5, 6) is the next one, or
    // nothing was missed.
    const whole = await read('3');
    expect(whole).not.toContain('event: error');
    expect(ids(whole)).toEqual([4, 5, 6, 7]);
    const current = await read('7');
    expect(current).not.toContain('event: error');
    expect(ids(current)).toEqual([8]);
    // An id from a runtime that ran before this one (its numbering began again).
    const future = await read('500');
    expect(future).toContain('"code":"replay_gap"');
    expect(ids(future)).toEqual([9]);
  });

  it('Last-Event-ID replays only what is buffered after it, in order', async () => {
    const hub = new EventHub(3, (v) => v);
    for (let i = 1; i <= 5; i += 1) hub.publish(text(i, `e${i}`));
    expect(hub.since(null)).toEqual([]);
    expect(hub.since(3).map((e) => e.seq)).toEqual([4, 5]);
    expect(hub.since(0).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect([0, 1, 2, 3, 5, 6].map((n) => hub.missedSince(n))).toEqual([
      true,
      true,
      false,
      false,
      false,
      true,
    ]);
  });
});
