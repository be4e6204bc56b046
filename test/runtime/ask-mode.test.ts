import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
let server: Server | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
});

describe('ask mode through the runtime', () => {
  it('runs reads without asking and asks a human for writes, shell and external calls', async () => {
    server = createServer((_req, res) => res.end('pong'));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    fx = runtimeFixture({
      agents: { assistant: { mode: 'ask' } },
      http: { allowPrivateHosts: [`127.0.0.1:${port}`] },
    });
    writeFileSync(join(fx.project, 'in.txt'), 'input\n');
    const step = (id: string, tool: string, args: unknown) => ({
      kind: 'calls' as const,
      calls: [{ id, tool, args }],
    });
    const model = new ScriptedModel({
      assistant: [
        { respond: step('c1', 'read_file', { path: 'in.txt' }) },
        {
          expect: { kind: 'tool.result', contains: 'input' },
          respond: step('c2', 'write_file', { path: 'out.txt', content: 'written' }),
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: step('c3', 'shell', { command: 'echo from-shell' }),
        },
        {
          expect: { kind: 'tool.result', contains: 'from-shell' },
          respond: step('c4', 'http_request', { url: `http://127.0.0.1:${port}/`, method: 'GET' }),
        },
        { expect: { kind: 'tool.result', contains: 'pong' }, respond: { kind: 'final', text: 'all done' } },
      ],
    });
    rt = await fx.start(model);
    const asked: string[] = [];
    rt.onApproval((a) => {
      asked.push(`${a.tool}:${a.reason}`);
      setTimeout(() => rt?.decide(a.id, 'approved', 'alice'), 0);
    });
    const { runId, outcome } = await rt.chat('assistant', 'do the four things');
    expect(outcome).toEqual({ status: 'completed', reason: 'final_answer', text: 'all done' });
    model.assertConsumed('assistant', runId);
    expect(asked).toEqual(['write_file:mode_ask', 'shell:mode_ask', 'http_request:mode_ask']);
    expect(readFileSync(join(fx.project, 'out.txt'), 'utf8')).toBe('written');
  });

  it('deny mode executes no model-proposed tool', async () => {
    fx = runtimeFixture({ agents: { assistant: { mode: 'deny' } } });
    writeFileSync(join(fx.project, 'in.txt'), 'input\n');
    const model = new ScriptedModel({
      assistant: [
        { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'read_file', args: { path: 'in.txt' } }] } },
        { expect: { kind: 'tool.denied', reason: 'mode_deny' }, respond: { kind: 'final', text: 'cannot' } },
      ],
    });
    rt = await fx.start(model);
    const { runId, outcome } = await rt.chat('assistant', 'read it');
    expect(outcome.text).toBe('cannot');
    expect(runtimeInternals(rt).store.ledger.lookup(`call:${runId}:c1`)).toBeNull();
  });
});
