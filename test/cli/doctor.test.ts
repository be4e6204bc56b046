import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { runDoctor } from '../../runtime/doctor/checks.ts';
import { runtimeFixture } from '../support/runtime.ts';
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

  it('on a machine without nats-server (bubblewrap hides /usr/sbin), the CLI names the install command and exits 1', () => {
    const bin = fileURLToPath(new URL('../../bin/snotra.js', import.meta.url));
    const env = { PATH: '/usr/bin:/bin', HOME: dir, XDG_STATE_HOME: join(dir, 'xdg') };
    const hidden = ['--dev-bind', '/', '/', '--tmpfs', '/usr/sbin', '--tmpfs', '/usr/local/sbin'];
    // The same machine as seen from inside: nats-server is where it was installed, and then it is not.
    const check = spawnSync('/usr/bin/bwrap', [...hidden, '/bin/sh', '-c', 'test -e /usr/sbin/nats-server'], {
      encoding: 'utf8',
    });
    expect(check.status).toBe(1);
    const json = spawnSync('/usr/bin/bwrap', [...hidden, process.execPath, bin, 'doctor', '--json'], {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(json.status, json.stderr).toBe(1);
    const checks = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; status: string; fix?: string });
    expect(checks.find((c) => c.name === 'nats-server')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('sudo apt-get install -y nats-server'),
    });
    // Only that check fails: the rest of the report is still there.
    expect(checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual(['nats-server']);
    const text = spawnSync('/usr/bin/bwrap', [...hidden, process.execPath, bin, 'doctor'], {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(
      /^fail {2}nats-server: not found .*\n {6}fix: sudo apt-get install -y nats-server/m,
    );
  }, 120_000);

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

  it('the state dir: its lock held by a running runtime, then free; a readable dir is a warning with its chmod', async () => {
    const fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    try {
      const file = join(fx.dir, 'snotra.config.json');
      writeFileSync(
        file,
        JSON.stringify({
          stateDir: 'state',
          workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
          agents: { worker: { mode: 'ask' } },
        }),
      );
      const state = async () => {
        const r = io();
        const code = await runCli(['doctor', '--config', file, '--json'], r.io, fx.dir);
        const checks = r.out.map(
          (l) => JSON.parse(l) as { name: string; status: string; detail: string; fix?: string },
        );
        return { code, checks: Object.fromEntries(checks.map((c) => [c.name, c])) };
      };
      const rt = await fx.start(new ScriptedModel({ worker: [] }));
      let r;
      try {
        r = await state();
        expect(r.checks['state dir lock']).toMatchObject({
          status: 'ok',
          detail: `held by a running runtime (pid ${process.pid})`,
        });
        expect(r.checks['state dir']).toMatchObject({ status: 'ok', detail: fx.stateDir });
        expect(r.checks.database).toMatchObject({
          status: 'ok',
          detail: expect.stringContaining('integrity ok'),
        });
      } finally {
        await rt.stop();
      }
      r = await state();
      expect(r.checks['state dir lock']).toMatchObject({ status: 'ok', detail: 'free' });
      chmodSync(fx.stateDir, 0o755);
      r = await state();
      expect(r.checks['state dir']).toMatchObject({ status: 'warn', fix: `chmod 700 ${fx.stateDir}` });
      // A database that is not one fails its check, with what to do.
      chmodSync(fx.stateDir, 0o700);
      writeFileSync(join(fx.stateDir, 'snotra.db'), 'not a database, just text '.repeat(200));
      r = await state();
      expect(r.code).toBe(1);
      expect(r.checks.database).toMatchObject({ status: 'fail', fix: expect.stringContaining('move') });
    } finally {
      fx.cleanup();
    }
  }, 60_000);

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
