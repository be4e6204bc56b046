import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Observation } from '../../machines/run/types.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
const servers: Server[] = [];
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: (url: string, res: ServerResponse) => void): Promise<number> {
  const server = createServer((req, res) => handler(req.url ?? '/', res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function observations(runtime: Runtime, runId: string): Observation[] {
  const ctx = (
    runtimeInternals(runtime).store.snapshots.get(runId)?.snapshot as {
      context: { transcript: { role: string; observation?: Observation }[] };
    }
  ).context;
  return ctx.transcript.flatMap((e) => (e.observation ? [e.observation] : []));
}

describe('http_request through the runtime, with the config allowlist', () => {
  it('reaches an allowlisted local server, refuses a redirect from it to a non-allowlisted private address and an unlisted one', async () => {
    const hidden = await serve((_u, res) => res.end('internal secrets'));
    const allowed = await serve((url, res) => {
      if (url === '/hop') {
        res.writeHead(302, { location: `http://127.0.0.1:${hidden}/` });
        res.end();
      } else res.end('hello from the allowlisted server');
    });
    fx = runtimeFixture({
      agents: { worker: { mode: 'allow', tools: ['http_request'] } },
      http: { allowPrivateHosts: [`127.0.0.1:${allowed}`] },
    });
    const get = (id: string, url: string) => ({
      kind: 'calls' as const,
      calls: [{ id, tool: 'http_request', args: { url, method: 'GET' as const } }],
    });
    const model = new ScriptedModel({
      worker: [
        { respond: get('c1', `http://127.0.0.1:${allowed}/`) },
        {
          expect: { kind: 'tool.result', contains: 'hello from the allowlisted server' },
          respond: get('c2', `http://127.0.0.1:${allowed}/hop`),
        },
        { expect: { kind: 'tool.failed' }, respond: get('c3', `http://127.0.0.1:${hidden}/`) },
        {
          expect: { kind: 'tool.failed' },
          respond: get('c4', 'http://[::ffff:169.254.169.254]/latest/meta-data/'),
        },
        { expect: { kind: 'tool.failed' }, respond: { kind: 'final', text: 'done' } },
      ],
    });
    rt = await fx.start(model);
    const { runId, outcome } = await rt.chat('worker', 'fetch');
    expect(outcome.status).toBe('completed');
    model.assertConsumed('worker', runId);
    const failed = observations(rt, runId).filter((o) => o.kind === 'tool.failed');
    expect(failed).toHaveLength(3);
    for (const f of failed) expect(f.kind === 'tool.failed' && f.message).toMatch(/host_refused|redirect/);
    expect(JSON.stringify(observations(rt, runId))).not.toContain('internal secrets');
  });
});
