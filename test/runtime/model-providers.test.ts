import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { FakeModelServer, fixture, type SeenRequest } from '../model/fake-server.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { withDecodedRows } from '../support/stored-bytes.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const KEY = 'sk-proj-Wv7Rk2Qd9Xm4Lp8Tn3Hs6Jb1Fc5Gz0Ya';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
let server: FakeModelServer | null = null;
let rtNext: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  await rtNext?.stop();
  rtNext = null;
  await server?.close();
  fx?.cleanup();
  rt = null;
  server = null;
  fx = null;
});

/** Every byte under `dir` (database, WAL, bus store), for a needle search. */
function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else parts.push(readFileSync(p));
    }
  };
  walk(dir);
  // Decoded too: snapshots and audit rows are stored encoded.
  return withDecodedRows(Buffer.concat(parts));
}

/** The model step a request is for: how many assistant turns its history holds. */
function stepOf(req: SeenRequest): number {
  const messages = (req.body.messages ?? []) as { role: string }[];
  return messages.filter((m) => m.role === 'assistant').length;
}

const PROVIDERS = [
  {
    provider: 'openai-compatible',
    dir: 'openai',
    keyHeader: (r: SeenRequest) => r.headers.authorization,
    expectedKeyHeader: `Bearer ${KEY}`,
    toolNames: (r: SeenRequest) =>
      (r.body.tools as { function: { name: string } }[]).map((t) => t.function.name),
    observation: (r: SeenRequest) =>
      (r.body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool')?.content ?? '',
  },
  {
    provider: 'anthropic',
    dir: 'anthropic',
    keyHeader: (r: SeenRequest) => r.headers['x-api-key'],
    expectedKeyHeader: KEY,
    toolNames: (r: SeenRequest) => (r.body.tools as { name: string }[]).map((t) => t.name),
    observation: (r: SeenRequest) =>
      JSON.stringify(
        (r.body.messages as { content: { type: string }[] }[])
          .flatMap((m) => m.content)
          .find((b) => b.type === 'tool_result'),
      ),
  },
] as const;

describe.each(PROVIDERS)('$provider provider through the real runtime', (p) => {
  async function setup(agent: Record<string, unknown> = {}) {
    server = await FakeModelServer.start();
    fx = runtimeFixture({
      agents: {
        assistant: {
          mode: 'allow',
          tools: ['read_file', 'list_dir'],
          model: {
            provider: p.provider,
            baseUrl: `${server.url}/v1`,
            model: 'test-model',
            apiKey: { secret: 'model-key' },
          },
          ...agent,
        },
      },
    });
    writeFileSync(join(fx.project, 'notes.txt'), 'the password hint is tangerine\n');
    rt = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
      secretStore: new MemorySecretStore({ 'model-key': KEY }),
    });
    return { server, fx, rt };
  }

  it('model → read_file → observation → final answer, with exactly the granted tools and the key only in its header', async () => {
    const { server, fx, rt } = await setup();
    server.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture(`${p.dir}/read-file.sse`) }
        : { sse: fixture(`${p.dir}/final.sse`, { TEXT: 'tangerine' }) };
    const { runId, outcome } = await rt.chat('assistant', 'what does notes.txt say?');
    expect(outcome).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'The file says: tangerine',
    });
    expect(server.requests.map(stepOf)).toEqual([0, 1]);
    for (const req of server.requests) {
      expect(p.toolNames(req)).toEqual(['list_dir', 'read_file']);
      expect(p.keyHeader(req)).toBe(p.expectedKeyHeader);
      expect(req.raw).not.toContain(KEY);
    }
    // The model's second step saw the real file content as the tool's observation.
    expect(p.observation(server.requests[1] as SeenRequest)).toContain('tangerine');
    const ledger = runtimeInternals(rt).store.ledger.lookup(`call:${runId}:c00000000`);
    expect(ledger?.status).toBe('completed');
    await rt.stop();
    expect(allBytes(fx.stateDir).includes(KEY)).toBe(false);
    expect(fx.logs.join('')).not.toContain(KEY);
  });

  it('the request carries exactly the granted tools: a narrower grant offers less', async () => {
    const { server, rt } = await setup({ tools: ['list_dir'] });
    server.route = () => ({ sse: fixture(`${p.dir}/final.sse`, { TEXT: 'x' }) });
    const { outcome } = await rt.chat('assistant', 'hi');
    expect(outcome.status).toBe('completed');
    expect(p.toolNames(server.requests[0] as SeenRequest)).toEqual(['list_dir']);
  });

  it('401: the run fails at once with a clear message that names the secret, not the key', async () => {
    const { server, fx, rt } = await setup();
    server.route = () => ({
      status: 401,
      json: {
        error: {
          message: `Incorrect API key provided: ${KEY}`,
          type: 'authentication_error',
          code: 'invalid_api_key',
        },
      },
    });
    const { runId, outcome } = await rt.chat('assistant', 'hi');
    expect(outcome).toMatchObject({ status: 'failed', reason: 'model_error' });
    expect(outcome.message).toMatch(
      /answered HTTP 401 \(invalid_api_key\); check the API key in secret "model-key"/,
    );
    expect(server.requests).toHaveLength(1);
    const stored = runtimeInternals(rt).store.snapshots.get(runId)?.snapshot as {
      context: { outcome: { message: string } };
    };
    expect(stored.context.outcome.message).toMatch(/HTTP 401/);
    await rt.stop();
    expect(allBytes(fx.stateDir).includes(KEY)).toBe(false);
    expect(fx.logs.join('')).not.toContain(KEY);
  });

  it('a call of a tool the agent is not granted is denied, the model sees why, and the run continues', async () => {
    const { server, rt } = await setup({ tools: ['list_dir'] });
    server.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture(`${p.dir}/read-file.sse`) }
        : { sse: fixture(`${p.dir}/final.sse`, { TEXT: 'ok' }) };
    const { outcome } = await rt.chat('assistant', 'read things');
    expect(outcome).toMatchObject({ status: 'completed', text: 'The file says: ok' });
    expect(p.observation(server.requests[1] as SeenRequest)).toMatch(
      /denied by the runtime's policy \(tool_not_granted\)/,
    );
    expect(p.observation(server.requests[1] as SeenRequest)).not.toContain('tangerine');
  });

  it('a shutdown during a model step leaves the run resumable: the next runtime asks the step again and finishes', async () => {
    const { server, fx, rt } = await setup();
    server.route = () => ({ hang: true });
    const runId = await rt.runs.runTask('assistant', 't-stop', 'what does notes.txt say?');
    await eventually(() => server.requests.length === 1, 20_000, 'the model asked');
    await rt.stop();
    server.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture(`${p.dir}/read-file.sse`) }
        : { sse: fixture(`${p.dir}/final.sse`, { TEXT: 'tangerine' }) };
    const again = await fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
      secretStore: new MemorySecretStore({ 'model-key': KEY }),
    });
    rtNext = again;
    expect(await again.waitForRun(runId)).toMatchObject({
      status: 'completed',
      text: 'The file says: tangerine',
    });
    expect(server.requests.map(stepOf)).toEqual([0, 0, 1]);
  });

  it('the answer commits with, or before, the audit of the calls it proposes', async () => {
    const { server, rt } = await setup();
    server.route = (req) =>
      stepOf(req) === 0
        ? { sse: fixture(`${p.dir}/parallel.sse`) }
        : { sse: fixture(`${p.dir}/final.sse`, { TEXT: 'ok' }) };
    // After every commit, a second connection reads what is committed: each proposed call in
    // the audit is among the calls of the committed snapshot of its run.
    const reader = openStore({
      path: runtimeInternals(rt).store.path,
      redactor: new Redactor(),
      readonly: true,
    });
    const seen: Array<{ callId: string; stored: string[] | null }> = [];
    let checked = 0;
    runtimeInternals(rt).store.joinEachCommit({
      write: () => {},
      undone: () => {},
      ended: (committed) => {
        if (!committed) return;
        for (const e of reader.audit.list()) {
          if (e.kind !== 'proposed' || seen.some((x) => x.callId === e.callId)) continue;
          const ctx = (
            reader.snapshots.get(e.runId ?? '')?.snapshot as
              { context: { calls: { id: string }[] } } | undefined
          )?.context;
          seen.push({ callId: e.callId ?? '', stored: ctx?.calls.map((c) => c.id) ?? null });
        }
        checked++;
      },
    });
    try {
      const { outcome } = await rt.chat('assistant', 'read both');
      expect(outcome.status).toBe('completed');
    } finally {
      reader.close();
    }
    expect(checked).toBeGreaterThan(0);
    const calls = ['c00000000', 'c00000001'];
    expect(seen.map((x) => x.callId).sort()).toEqual(calls.map((id) => expect.stringContaining(id)));
    for (const x of seen) expect(x.stored).toEqual(calls);
  });
});
