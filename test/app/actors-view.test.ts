// The Actors view against the shared contract of GET /v1/actors and the actor.* events
// (/work/CONTRACT-ACTORS.md, issue 16): the built app is served by a stand-in origin that answers
// the contract's shapes with the real machine graphs, so each detail of the page can be driven
// (the tree, parked runs, budgets, a re-read on every actor.* event, the selected actor's state
// highlighted in its machine's diagram, the SVG `snotra viz` draws). The page against the real sidecar, parked runs shown
// within 100 ms: test/inspect/latency.test.ts.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphOf } from '../../runtime/viz/machines.ts';
import { renderGraph } from '../../runtime/viz/render.ts';
import { sendStatic, staticTable } from '../../surfaces/sidecar/static.ts';
import { until } from '../sidecar/client.ts';

const files = staticTable();
let server: Server;
let origin: string;
let browser: Browser;
let runState = 'running.acting.deciding';
let actorReads = 0;
const streams = new Set<ServerResponse>();

function tree() {
  return {
    seq: 7,
    actors: [
      {
        id: 'assistant',
        kind: 'agent',
        machine: 'agent',
        state: 'ready',
        parked: false,
        children: [
          {
            id: 'assistant:run-1',
            kind: 'run',
            machine: 'run',
            state: runState,
            parked: false,
            status: 'running',
            agentId: 'assistant',
            runId: 'assistant:run-1',
            budgets: { toolCalls: { used: 3, limit: 20 }, modelSteps: { used: 2, limit: null } },
            children: [],
          },
          {
            id: 'assistant:run-0',
            kind: 'run',
            machine: 'run',
            state: 'waiting_for_approval',
            parked: true,
            status: 'waiting_for_approval',
            children: [
              {
                id: 'apr:1',
                kind: 'approval',
                machine: 'approval',
                state: 'requested',
                parked: true,
                status: 'pending',
                tool: 'shell',
                children: [],
              },
            ],
          },
        ],
      },
    ],
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
    if (url === '/v1/actors') {
      actorReads += 1;
      return json(res, tree());
    }
    const machine = /^\/v1\/machines\/([a-z-]+)$/.exec(url);
    if (machine !== null) return json(res, graphOf(machine[1] as string));
    const svg = /^\/v1\/machines\/([a-z-]+)\/svg$/.exec(url);
    if (svg !== null) {
      const g = graphOf(svg[1] as string);
      if (g !== null) void renderGraph(g, 'svg').then((text) => json(res, { machine: g.machine, svg: text }));
      return;
    }
    if (url === '/v1/inbox') return json(res, { approvals: [] });
    if (url === '/v1/runs') return json(res, { runs: [] });
    if (url === '/v1/agents') return json(res, { agents: [] });
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

describe('the Actors view, against the GET /v1/actors contract', () => {
  it('shows the tree with states, parked runs and budgets; a click highlights the state in the machine graph; actor.* events re-read it', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      await page.click('button[data-tab=actors]');
      const tree = page.locator('[data-testid=actor-tree]');
      await tree.locator('button.actor').first().waitFor({ timeout: 15_000 });
      expect(await tree.locator('button.actor').count()).toBe(4);
      const run = tree.locator('button.actor', { hasText: 'assistant:run-1' });
      expect(await run.innerText()).toContain('running.acting.deciding');
      expect(await run.innerText()).toContain('toolCalls 3/20');
      expect(await run.innerText()).toContain('modelSteps 2/∞');
      const parked = tree.locator('button.actor.parked');
      expect(await parked.count()).toBe(2);
      expect(await tree.locator('button.actor', { hasText: 'apr:1' }).innerText()).toContain('shell');
      await run.click();
      const graph = page.locator('.actors [data-testid=machine-graph][data-machine=run]');
      const current = graph.locator('.state.current');
      await until(
        async () => (await current.getAttribute('data-state')) === 'run.running.acting.deciding',
        15_000,
        'the highlighted state',
      );
      // Its ancestors are marked active, nothing else is current.
      expect(await graph.locator('.state.active').count()).toBe(3);
      expect(await current.count()).toBe(1);
      // A state change arrives as an actor.state event: the tree is read again and the highlight moves.
      const before = actorReads;
      runState = 'running.acting.executing';
      for (const s of streams)
        s.write(
          `id: 1\nevent: actor.state\ndata: ${JSON.stringify({ type: 'actor.state', seq: 8, actor: { id: 'assistant:run-1', kind: 'run', machine: 'run', state: runState, parked: false, parentId: 'assistant' } })}\n\n`,
        );
      await until(
        async () => (await current.getAttribute('data-state')) === 'run.running.acting.executing',
        15_000,
        'the moved highlight',
      );
      expect(actorReads).toBeGreaterThan(before);
      expect(await run.innerText()).toContain('running.acting.executing');
    } finally {
      await page.close();
    }
  }, 60_000);
});
