// The Inbox of a cluster node's web app shows which node parked each approval (issue 34), against
// the shape of GET /v1/inbox in cluster mode (`node` on each item; the route itself:
// test/cluster/shared-view.test.ts): the built app is served by a stand-in origin answering that
// shape, in a real Chromium. On a single runtime (no `node`) the card has no node line.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendStatic, staticTable } from '../../surfaces/sidecar/static.ts';

const files = staticTable();
let server: Server;
let origin: string;
let browser: Browser;
const streams = new Set<ServerResponse>();

function approval(id: string, node: string | null | undefined) {
  return {
    id,
    callId: 'c1',
    runId: `worker:${id}`,
    sessionId: 's',
    taskId: null,
    agentId: 'worker',
    surface: 'scheduled',
    tool: 'send_message',
    args: { channel: '#ops', text: 'hi' },
    target: '#ops',
    risk: 'external',
    reason: 'mode_ask',
    ruleId: 'mode.ask',
    createdAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    status: 'pending',
    decidedBy: null,
    decisionReason: null,
    ...(node === undefined ? {} : { node }),
  };
}

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '';
    const file = files.get(url);
    if (req.method === 'GET' && file !== undefined) return sendStatic(res, file, false);
    if (url === '/v1/inbox')
      return json(res, {
        approvals: [
          approval('apr-a', 'node-a'),
          approval('apr-local', null),
          approval('apr-single', undefined),
        ],
      });
    if (url === '/v1/runs') return json(res, { runs: [] });
    if (url === '/v1/agents') return json(res, { agents: [] });
    if (url === '/v1/actors') return json(res, { seq: 0, actors: [] });
    if (url === '/v1/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': open\n\n');
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end('{"error":{"code":"not_found","message":"no such route"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const s of streams) s.destroy();
  server?.close();
});

describe('the Inbox on a cluster node', () => {
  it('names the node that parked each approval; a card without one (a single runtime) has no node line', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      await page.click('button[data-tab=inbox]');
      const list = page.locator('[data-testid=inbox-list]');
      await list.locator('[data-approval="apr-single"]').waitFor({ timeout: 30_000 });
      const node = (id: string) => list.locator(`[data-approval="${id}"] dd.node`);
      expect(await node('apr-a').innerText()).toBe('node-a');
      expect(await node('apr-local').count()).toBe(0);
      expect(await node('apr-single').count()).toBe(0);
      expect(await list.locator('[data-approval="apr-a"] dt', { hasText: 'node' }).count()).toBe(1);
    } finally {
      await page.close();
    }
  }, 90_000);
});
