import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../runtime/doctor/checks.ts';
import { runCli } from '../../surfaces/cli/main.ts';

const dir = mkdtempSync(join(tmpdir(), 'snotra-doctor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io() {
  const out: string[] = [];
  return {
    out,
    io: { stdout: (t: string) => void out.push(t), stderr: () => {}, stdinLines: async function* () {} },
  };
}

describe('snotra doctor', () => {
  it('names the install command when nats-server is missing, and fails', async () => {
    const checks = await runDoctor(undefined, dir, { natsBinary: join(dir, 'no', 'nats-server') });
    expect(checks.find((c) => c.name === 'nats-server')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('apt-get install -y nats-server'),
    });
  });

  it('reports every check as JSON lines, each with a fix when not ok; exit 0 on this machine', async () => {
    const r = io();
    expect(await runCli(['doctor', '--json'], r.io, dir)).toBe(0);
    const checks = r.out.map((l) => JSON.parse(l) as { name: string; status: string; fix?: string });
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'node',
        'nats-server',
        'sandbox',
        'chromium',
        'secret store',
        'config',
        'state dir',
      ]),
    );
    for (const c of checks) if (c.status !== 'ok') expect(c.fix, c.name).toBeTruthy();
  });

  it('an invalid config is a failed check naming the field, exit 1', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ agents: { a: { mode: 'yolo' } } }));
    const r = io();
    expect(await runCli(['doctor', '--config', file, '--json'], r.io, dir)).toBe(1);
    const config = r.out
      .map((l) => JSON.parse(l) as { name: string; status: string; detail: string })
      .find((c) => c.name === 'config');
    expect(config?.status).toBe('fail');
    expect(config?.detail).toContain('agents.a.mode');
  });
});
