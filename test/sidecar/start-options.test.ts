import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSnotra, stopProcess } from '../support/snotra-process.ts';
import { call, configDir, until } from './client.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function agentConfig(sidecar: Record<string, unknown>) {
  const dir = configDir(
    {
      agents: { chatter: { mode: 'ask', model: { provider: 'scripted', script: 'chatter.json' } } },
      sidecar,
    },
    { chatter: [] },
  );
  dirs.push(dir);
  return join(dir, 'snotra.config.json');
}

describe('snotra start and the sidecar', () => {
  it('a launcher token shorter than 32 characters: exit 1 with a clear error that does not show it', async () => {
    const short = 'sh0rt-t0ken-abcdefghijklmnopq'; // 29 characters
    const p = startSnotra(['start', '--config', agentConfig({})], { SNOTRA_SIDECAR_TOKEN: short });
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('SNOTRA_SIDECAR_TOKEN is 29 characters long; it needs at least 32');
    expect(p.stderr()).not.toContain(short);
    expect(p.stdout()).not.toContain('"ready"');
  }, 60_000);

  it('a config asking for another address than 127.0.0.1 is refused before anything starts', async () => {
    for (const sidecar of [{ host: '0.0.0.0' }, { address: '::' }, { port: 0, bind: '192.168.1.2' }]) {
      const config = agentConfig(sidecar);
      const p = startSnotra(['start', '--config', config]);
      expect(await p.exited, JSON.stringify(sidecar)).toBe(1);
      expect(p.stderr()).toContain('invalid config');
      expect(p.stderr()).toContain(`unknown key "${Object.keys(sidecar).at(-1)}"`);
      expect(p.stderr()).toContain('the sidecar listens on 127.0.0.1 only');
      expect(p.stdout()).not.toContain('"ready"');
      expect(existsSync(join(config, '..', 'state'))).toBe(false);
    }
    // The benign look-alike: an unknown key elsewhere in sidecar gets the usual hint, not this one.
    const typo = startSnotra(['start', '--config', agentConfig({ prot: 1 })]);
    expect(await typo.exited).toBe(1);
    expect(typo.stderr()).toContain('sidecar: unknown key "prot"; did you mean "port"?');
    expect(typo.stderr()).not.toContain('127.0.0.1 only');
  }, 90_000);

  it('sidecar.enabled: false: the ready line says "sidecar": null', async () => {
    const p = startSnotra(['start', '--config', agentConfig({ enabled: false })]);
    try {
      const ready = await p.ready(30_000);
      expect(ready.sidecar).toBeNull();
    } finally {
      expect(await stopProcess(p)).toBe(0);
    }
  }, 60_000);

  it('a sidecar.port in use: exit 1 naming the port, and the state dir is free again', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const busy = (taken.address() as AddressInfo).port;
    try {
      const config = agentConfig({ port: busy });
      const p = startSnotra(['start', '--config', config]);
      expect(await p.exited).toBe(1);
      expect(p.stderr()).toContain(
        `sidecar_listen_failed: sidecar.port ${busy}: cannot listen on 127.0.0.1 (the port is in use)`,
      );
      expect(p.stdout()).not.toContain('"ready"');
      // The runtime it had started was stopped: a second start on the same state dir is not refused.
      const again = startSnotra(['start', '--config', config]);
      taken.close();
      try {
        expect((await again.ready(30_000)).sidecar).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      } finally {
        expect(await stopProcess(again)).toBe(0);
      }
    } finally {
      taken.close();
    }
  }, 90_000);

  it('a request flood gets 429 rate_limited while /health still answers; the port closes at stop', async () => {
    const token = randomBytes(32).toString('hex');
    const p = startSnotra(['start', '--config', agentConfig({ limits: { requestsPerMinute: 30 } })], {
      SNOTRA_SIDECAR_TOKEN: token,
    });
    let port = 0;
    try {
      const ready = await p.ready(30_000);
      port = Number(new URL(ready.sidecar as string).port);
      const auth = { Authorization: `Bearer ${token}` };
      const statuses: number[] = [];
      for (let i = 0; i < 40; i += 1)
        statuses.push((await call(port, 'GET', '/v1/inbox', { headers: auth })).status);
      expect(statuses.filter((s) => s === 200).length).toBe(30);
      expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
      const limited = await call(port, 'GET', '/v1/runs', { headers: auth });
      expect(limited.status).toBe(429);
      expect(limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
      // Requests without the token are counted apart (test/sidecar/rate-per-client.test.ts).
      expect((await call(port, 'GET', '/v1/runs')).status).toBe(401);
      const health = await call(port, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.text).toBe('{"ok":true}');
    } finally {
      expect(await stopProcess(p)).toBe(0);
    }
    expect(p.stdout()).toContain('"event":"stopped"');
    await until(
      async () => {
        try {
          await call(port, 'GET', '/health');
          return false;
        } catch (err) {
          return (err as { code?: string }).code === 'ECONNREFUSED';
        }
      },
      10_000,
      'the sidecar port closed',
    );
    expect(p.stdout() + p.stderr()).not.toContain(token);
  }, 60_000);
});
