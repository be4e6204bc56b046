import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { call, configDir } from './client.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const ALLOWED = 'http://127.0.0.1:1';
const PER_MINUTE = 20;

let dir: string;
let snotra: StartedProcess;
let port: number;

beforeAll(async () => {
  dir = configDir(
    {
      agents: { chatter: { mode: 'ask', model: { provider: 'scripted', script: 'chatter.json' } } },
      sidecar: { allowedOrigins: [ALLOWED], limits: { requestsPerMinute: PER_MINUTE } },
    },
    { chatter: [] },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
  });
  port = Number(new URL((await snotra.ready(60_000)).sidecar as string).port);
}, 90_000);

afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function statuses(n: number, path: string, headers: Record<string, string>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await call(port, 'GET', path, { headers })).status);
  return out;
}

/** Opens /v1/ws and resolves with the HTTP status of a refused upgrade, or 101. */
function upgrade(protocols: string[]): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws`, protocols);
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on('error', () => {});
  });
}

describe('the request rate is limited per client (token holders; without the token, per Origin)', () => {
  it('a flood without the token gets 429 rate_limited, while the token holder and /health are still served', async () => {
    const flood = await statuses(PER_MINUTE + 10, '/v1/runs', {});
    expect(flood.slice(0, PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(flood.slice(PER_MINUTE).every((s) => s === 429)).toBe(true);
    const limited = await call(port, 'GET', '/v1/inbox', { headers: { Authorization: 'Bearer wrong' } });
    expect(limited.status).toBe(429);
    expect(limited.json()).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining(`${PER_MINUTE}`) },
    });
    expect(limited.headers['content-type']).toMatch(/^application\/json/);
    // The holder of the token is not starved by it.
    expect((await call(port, 'GET', '/v1/inbox', { headers: AUTH })).status).toBe(200);
    expect(await upgrade(['snotra.v1', `snotra.token.${TOKEN}`])).toBe(101);
    // Without the token from an allowed page: its own budget.
    expect((await call(port, 'GET', '/v1/runs', { headers: { Origin: ALLOWED } })).status).toBe(401);
    const health = await call(port, 'GET', '/health');
    expect([health.status, health.text]).toEqual([200, '{"ok":true}']);
  }, 60_000);

  it('the token holder flooding is limited too (HTTP and WebSocket upgrades); /health still answers', async () => {
    // Some of the token holder's requests were counted above (this minute or, on a slow machine, the last).
    const flood = await statuses(PER_MINUTE + 5, '/v1/inbox', AUTH);
    const served = flood.indexOf(429);
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(PER_MINUTE);
    expect(flood.slice(0, served).every((s) => s === 200)).toBe(true);
    expect(flood.slice(served).every((s) => s === 429)).toBe(true);
    expect(await upgrade(['snotra.v1', `snotra.token.${TOKEN}`])).toBe(429);
    const health = await call(port, 'GET', '/health');
    expect([health.status, health.text]).toEqual([200, '{"ok":true}']);
    // The allowed page without the token still has its own budget left.
    expect((await call(port, 'GET', '/v1/runs', { headers: { Origin: ALLOWED } })).status).toBe(401);
  }, 60_000);
});
