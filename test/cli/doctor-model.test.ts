/**
 * `snotra doctor` checks each agent's model: its key resolves (or the check names what to set)
 * and the API answers a models listing with it (a local server here; never the key in a URL or
 * in the output).
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../runtime/doctor/checks.ts';

const KEY = 'sk-doctor-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'snotra-doctor-model-'));
const seen: { url: string; authorization: string | undefined }[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      res.writeHead(401).end('{"error":"bad key"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"local-model"}]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, model: Record<string, unknown> | null): string {
  const file = join(dir, `${name}.json`);
  const agents = { a: { mode: 'ask', ...(model === null ? {} : { model }) } };
  writeFileSync(file, JSON.stringify({ stateDir: join(dir, 'state'), secrets: { backend: 'env' }, agents }));
  return file;
}

const modelOf = (checks: { name: string }[]) =>
  checks.filter((c) => c.name.startsWith('agent a') || c.name === 'model');

describe('doctor: the model answers and its key resolves', () => {
  it('a key in an exported variable and a server that lists the model: both ok, and no key in the output', async () => {
    const file = config('ok', {
      provider: 'openai-compatible',
      baseUrl: base,
      model: 'local-model',
      apiKey: { env: 'MY_API_KEY' },
    });
    const checks = await runDoctor(file, dir, { env: { MY_API_KEY: KEY } });
    expect(modelOf(checks)).toEqual([
      { name: 'agent a: key', status: 'ok', detail: 'environment variable MY_API_KEY is set' },
      { name: 'agent a: model', status: 'ok', detail: `${base} answers; model "local-model" is listed` },
    ]);
    expect(seen.at(-1)).toEqual({ url: '/v1/models', authorization: `Bearer ${KEY}` });
    expect(JSON.stringify(checks)).not.toContain(KEY);
  });

  it('an unset key fails naming the variable to set; nothing is sent', async () => {
    const before = seen.length;
    const env = config('env-store', {
      provider: 'openai-compatible',
      baseUrl: base,
      model: 'm',
      apiKey: { secret: 'openai-key' },
    });
    expect(modelOf(await runDoctor(env, dir, { env: {} }))).toEqual([
      {
        name: 'agent a: key',
        status: 'fail',
        detail: 'secret "openai-key" is not set',
        fix: 'set SNOTRA_SECRET_OPENAI_KEY in the environment snotra starts in (secrets.backend "env")',
      },
    ]);
    expect(seen.length).toBe(before);
  });

  it('a refused key, a model not listed, a server that does not answer, and no model at all each say what to fix', async () => {
    const refused = config('refused', {
      provider: 'openai-compatible',
      baseUrl: base,
      model: 'local-model',
      apiKey: { env: 'MY_API_KEY' },
    });
    expect(modelOf(await runDoctor(refused, dir, { env: { MY_API_KEY: 'wrong' } }))[1]).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('HTTP 401, the key was refused'),
      fix: 'check agents.a.model.apiKey',
    });
    const other = config('other', {
      provider: 'openai-compatible',
      baseUrl: base,
      model: 'gpt-x',
      apiKey: { env: 'MY_API_KEY' },
    });
    expect(modelOf(await runDoctor(other, dir, { env: { MY_API_KEY: KEY } }))[1]).toMatchObject({
      status: 'warn',
      fix: `check agents.a.model.model against ${base}/models`,
    });
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = config('down', {
      provider: 'openai-compatible',
      baseUrl: closed,
      model: 'm',
    });
    expect(modelOf(await runDoctor(down, dir))).toEqual([
      { name: 'agent a: key', status: 'ok', detail: 'no API key configured (a local server needs none)' },
      {
        name: 'agent a: model',
        status: 'fail',
        detail: `${closed} does not answer (ECONNREFUSED)`,
        fix: 'start the model server, or correct agents.a.model.baseUrl',
      },
    ]);
    const none = config('none', null);
    expect(modelOf(await runDoctor(none, dir))).toEqual([
      expect.objectContaining({
        name: 'model',
        status: 'warn',
        detail: 'no agent has a model, so snotra run has nothing to ask',
        fix: expect.stringContaining('snotra init --force --provider ollama|llama.cpp|openai'),
      }),
    ]);
  });
});
