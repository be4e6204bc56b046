import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { call, configDir, until } from './client.ts';
import { hostilePage } from './hostile-page.ts';

const CHROMIUM = process.env.CHROME_PATH ?? '/usr/bin/chromium';
const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };

let dir: string;
let snotra: StartedProcess;
let port: number;
let browser: Browser;
let hostile: Server;
let hostilePort: number;
let approvalId: string;

beforeAll(async () => {
  const fireAt = new Date(Date.now() + 2500).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } } },
      surfaces: {
        scheduled: [{ id: 'nightly', agent: 'worker', cron: fireAt, message: 'write', missed: 'run-once' }],
      },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ],
    },
  );
  snotra = startSnotra(['start', '--config', join(dir, 'snotra.config.json')], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
  });
  port = Number(new URL((await snotra.ready(30_000)).sidecar as string).port);
  approvalId = (
    await until(
      async () =>
        ((await call(port, 'GET', '/v1/inbox', { headers: AUTH })).json() as { approvals: { id: string }[] })
          .approvals[0],
      30_000,
      'a parked approval',
    )
  ).id;
  hostile = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(hostilePage(port, approvalId));
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  hostilePort = (hostile.address() as AddressInfo).port;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP evil.test 127.0.0.1',
    ],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  hostile?.close();
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

type Attempt = { name: string; outcome: string; status?: number; type?: string; code?: number; text: string };

async function stillPending(): Promise<void> {
  const a = await call(port, 'GET', '/v1/inbox', { headers: AUTH });
  const list = (a.json() as { approvals: { id: string; status: string }[] }).approvals;
  expect(list.find((x) => x.id === approvalId)?.status).toBe('pending');
}

describe('a hostile page in headless Chromium reads nothing and changes nothing', () => {
  for (const origin of ['127.0.0.1', 'evil.test']) {
    it(`served from ${origin} on another port: fetch, text/plain and form POSTs, EventSource and WebSocket all fail`, async () => {
      const page = await browser.newPage();
      try {
        await page.goto(`http://${origin}:${hostilePort}/`);
        const results = (await page.evaluate('window.attack()')) as Attempt[];
        expect(results).toHaveLength(12);
        for (const r of results) {
          // Nothing of the API's data reaches the page.
          expect(r.text, r.name).not.toMatch(/approvals|runId|"event"|write_file|\[open\]/);
          if (r.name.startsWith('websocket')) expect(r.code, r.name).toBe(1006);
          if (r.name === 'eventsource') expect(r.outcome).toBe('error');
        }
        // /health carries no data; CORS does not let the page read even that.
        const byName = Object.fromEntries(results.map((r) => [r.name, r]));
        expect(byName['fetch inbox']?.outcome).toBe('blocked');
        expect(byName['fetch health']?.outcome).toBe('blocked');
        expect(byName['cors json approve']?.outcome).toBe('blocked');
        const noCors = byName['no-cors text/plain approve'];
        expect(noCors?.type === 'opaque' || noCors?.outcome === 'blocked').toBe(true);
        // The form POSTs did reach the sidecar (the browser did not block them first): refused by Origin.
        for (const name of ['sink', 'sink-urlencoded', 'sink-multipart']) {
          const sink = page.frame({ name });
          expect(await sink?.content(), name).toContain('bad_origin');
        }
        await stillPending();
      } finally {
        await page.close();
      }
    }, 60_000);
  }

  it('DNS rebinding: a page at evil.test:<sidecar port> is refused by Host, /health included', async () => {
    const page = await browser.newPage();
    try {
      const health = await page.goto(`http://evil.test:${port}/health`);
      expect(health?.status()).toBe(403);
      expect(await page.textContent('body')).toContain('bad_host');
      const sameOrigin = (await page.evaluate(
        "fetch('/v1/inbox', { headers: { Authorization: 'Bearer guess' } }).then(async (r) => [r.status, await r.text()])",
      )) as [number, string];
      expect(sameOrigin[0]).toBe(403);
      expect(sameOrigin[1]).not.toContain('approvals');
      await stillPending();
    } finally {
      await page.close();
    }
  }, 60_000);

  it("the benign look-alike: the sidecar's own origin with the token reads the inbox; a client approves once", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`http://127.0.0.1:${port}/health`);
      const read = (await page.evaluate(
        `fetch('/v1/inbox', { headers: { Authorization: 'Bearer ${TOKEN}' } }).then(async (r) => [r.status, await r.text()])`,
      )) as [number, string];
      expect(read[0]).toBe(200);
      expect(read[1]).toContain(approvalId);
    } finally {
      await page.close();
    }
    const ok = await call(port, 'POST', `/v1/inbox/${approvalId}/decision`, {
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    expect(ok.status).toBe(200);
  });
});
