import { jetstream } from '@nats-io/jetstream';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { startEmbeddedNats, type EmbeddedNats } from '../../runtime/bus/index.ts';
import { listProcesses } from '../../runtime/processes/index.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
let external: EmbeddedNats | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  await external?.stop();
  external = null;
  fx?.cleanup();
});

const read = (p: string) => {
  try {
    return readFileSync(p);
  } catch {
    return Buffer.alloc(0);
  }
};

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

const hello = new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'hi' } }] });

describe('the bus', () => {
  it('keeps the embedded server’s token out of every command line, the logs, the database and the files it writes', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    rt = await fx.start(hello);
    const runId = await rt.runs.runTask('worker', 't', 'hello');
    await rt.waitForRun(runId);
    // The token, read where it legitimately lives: the nats-server child's environment.
    let token: string | null = null;
    for (const p of await listProcesses()) {
      const env = read(`/proc/${p.pid}/environ`).toString('utf8').split('\0');
      const entry = env.find((e) => e.startsWith('SNOTRA_NATS_TOKEN='));
      if (
        entry !== undefined &&
        read(`/proc/${p.pid}/cmdline`).toString().includes(join(fx.stateDir, 'nats'))
      ) {
        token = entry.slice('SNOTRA_NATS_TOKEN='.length);
      }
    }
    expect(token).toMatch(/^snotra_[0-9a-f]{64}$/);
    const secret = Buffer.from(token as string);
    for (const p of await listProcesses())
      expect(read(`/proc/${p.pid}/cmdline`).includes(secret)).toBe(false);
    for (const f of filesUnder(fx.stateDir)) expect(read(f).includes(secret), f).toBe(false);
    expect(read(join(fx.stateDir, 'nats', 'nats-server.conf')).toString()).toContain('$SNOTRA_NATS_TOKEN');
    expect(fx.logs.join('').includes(token as string)).toBe(false);
    await rt.stop();
    rt = null;
    for (const f of filesUnder(fx.stateDir)) expect(read(f).includes(secret), f).toBe(false);
  });

  it('drops and counts an oversized agent message, and keeps serving', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    rt = await fx.start(hello);
    const big = JSON.stringify({
      v: 1,
      id: 'x',
      kind: 'agent.message',
      ts: new Date().toISOString(),
      source: 's',
      payload: { text: 'a'.repeat(300 * 1024) },
    });
    await jetstream(runtimeInternals(rt).bus.nats).publish('snotra.v1.agent.worker.message', big);
    await eventually(() => runtimeInternals(rt!).queue.invalid >= 1, 10_000, 'the oversized message counted');
    expect(fx.logs.join('')).toContain('"reason":"oversized"');
    const runId = await rt.runs.runTask('worker', 't', 'hello');
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
  });

  it('connects to a configured bus.url with credentials resolved by name from the secret store', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    external = await startEmbeddedNats({ stateDir: join(fx.dir, 'external-nats') });
    const target = external.target();
    const token = (target.credentials as { token: string }).token;
    const withBus = runtimeFixture({
      agents: { worker: { mode: 'ask' } },
      bus: {
        url: Array.isArray(target.url) ? target.url[0] : target.url,
        credentials: { secret: 'nats-token' },
      },
    });
    try {
      rt = await withBus.start(hello, { secretStore: new MemorySecretStore({ 'nats-token': token }) });
      expect(existsSync(join(withBus.stateDir, 'nats'))).toBe(false);
      const runId = await rt.runs.runTask('worker', 't', 'hello');
      expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
      await rt.stop();
      rt = null;
      await expect(withBus.start(hello)).rejects.toThrow(
        /bus\.credentials: secret "nats-token" cannot be read: no secret store is configured: set secrets\.backend/,
      );
      await expect(
        withBus.start(hello, { secretStore: new MemorySecretStore({ 'nats-token': 'wrong' }) }),
      ).rejects.toThrow();
    } finally {
      withBus.cleanup();
    }
  });
});
