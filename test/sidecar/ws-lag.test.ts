import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunFeedEvent } from '../../runtime/events.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { Redactor } from '../../store/index.ts';
import { EventHub } from '../../surfaces/sidecar/hub.ts';
import { ConnectionGate, RateLimiter } from '../../surfaces/sidecar/limits.ts';
import { WS_LAG_BYTES, WS_PROTOCOL, webSocketEndpoint } from '../../surfaces/sidecar/ws.ts';
import { until } from './client.ts';

let server: Server | undefined;
let endpoint: { close(): void } | undefined;
afterEach(() => {
  endpoint?.close();
  server?.closeAllConnections();
  server?.close();
});

const TOKEN = 't'.repeat(43);

const text = (i: number): RunFeedEvent => ({
  type: 'model.text',
  delta: `${i} ${'x'.repeat(16_000)}`,
  runId: 'a:1',
  ts: 0,
  agentId: 'a',
  parentRunId: null,
});

describe('WebSocket over a real socket', () => {
  it('a client that stops reading is sent one error message and closed with 1008; its slot is released', async () => {
    const redactor = new Redactor();
    const hub = new EventHub(10, (v) => redactor.redact(v));
    const gate = new ConnectionGate(1);
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    // The endpoint only redacts with the runtime's redactor here (no chat is sent).
    const runtime = { read: { redact: <T>(v: T): T => redactor.redact(v) as T } } as unknown as Runtime;
    const ws = webSocketEndpoint({
      runtime,
      token: TOKEN,
      peers: () => ({ port, allowedOrigins: [] }),
      hub,
      gate,
      rate: new RateLimiter(1000),
      frameBytes: 4096,
    });
    endpoint = ws;
    server.on('upgrade', ws.onUpgrade);

    const client = new WebSocket(`ws://127.0.0.1:${port}/v1/ws`, [WS_PROTOCOL, `snotra.token.${TOKEN}`]);
    const messages: string[] = [];
    let closed: number | null = null;
    client.on('message', (d) => messages.push(String(d)));
    client.on('close', (code) => (closed = code));
    await new Promise<void>((resolve, reject) => {
      client.once('open', () => resolve());
      client.once('error', reject);
    });
    // A stuck tab: the client reads nothing more.
    (client as unknown as { _socket: { pause(): void } })._socket.pause();
    let slotFree = false;
    for (let sent = 0; !slotFree && sent < 64 * 1024 * 1024; sent += 16_000 * 64) {
      for (let i = 0; i < 64; i += 1) hub.publish(text(i));
      await new Promise((r) => setImmediate(r));
      try {
        gate.acquire()();
        slotFree = true;
      } catch {
        // Still held by the stuck client.
      }
    }
    expect(slotFree).toBe(false); // Not released before the client is told.
    (client as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(() => closed !== null, 30_000, 'the close');
    expect(closed).toBe(1008);
    const errors = messages.filter((m) => m.includes('"type":"error"'));
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0] as string)).toEqual({
      type: 'error',
      error: { code: 'client_lagging', message: expect.any(String) },
    });
    expect(messages.at(-1)).toBe(errors[0]);
    // Far less than everything published arrived: the queue stopped at the bound.
    expect(messages.length).toBeLessThan((WS_LAG_BYTES * 16) / 16_000);
    await until(
      () => {
        try {
          gate.acquire()();
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      'the slot released',
    );
  }, 60_000);
});
