import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { eventually, runtimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function snotra(args: string[], opts: { uid?: number; gid?: number } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
    ...opts,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('snotra start + inbox (separate processes)', () => {
  it('a scheduled run parks; `snotra inbox approve` from another process resumes it once; runs and audit show it', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-e2e-')));
    dirs.push(dir);
    mkdirSync(join(dir, 'project'));
    writeFileSync(
      join(dir, 'script.json'),
      JSON.stringify([
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ]),
    );
    const fireAt = new Date(Date.now() + 2500).toISOString().replace(/\.\d+Z$/, '');
    writeFileSync(
      join(dir, 'snotra.config.json'),
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
        agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'script.json' } } },
        surfaces: {
          scheduled: [
            // run-once: a start slower than the 2.5 s margin under load still runs the task once.
            { id: 'nightly', agent: 'worker', cron: fireAt, message: 'write the notes', missed: 'run-once' },
          ],
        },
      }),
    );
    const child = spawn(process.execPath, [BIN, 'start', '--config', join(dir, 'snotra.config.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TZ: 'UTC' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    try {
      const ready = JSON.parse(
        await eventually(() => out.split('\n').find((l) => l.includes('"ready"')), 20_000, 'the ready line'),
      );
      expect(ready).toMatchObject({
        event: 'ready',
        pid: child.pid,
        stateDir: join(dir, 'state'),
        agents: ['worker'],
      });
      expect(JSON.stringify(ready)).not.toMatch(/token/i);
      const stateDir = join(dir, 'state');
      expect(statSync(stateDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(stateDir, 'control.sock')).mode & 0o777).toBe(0o600);

      const pending = await eventually(
        () => {
          const r = snotra(['inbox', 'list', '--state-dir', stateDir, '--json']);
          return r.stdout.trim()
            ? (JSON.parse(r.stdout.trim().split('\n')[0] as string) as {
                id: string;
                tool: string;
                taskId: string;
              })
            : null;
        },
        20_000,
        'a pending approval',
      );
      expect(pending).toMatchObject({ tool: 'write_file', taskId: 'nightly' });
      expect(existsSync(join(dir, 'project', 'notes.txt'))).toBe(false);

      const approve = snotra(['inbox', 'approve', pending.id, '--state-dir', stateDir, '--json']);
      expect(approve.stderr).toBe('');
      expect(JSON.parse(approve.stdout)).toMatchObject({
        id: pending.id,
        status: 'approved',
        runtimeNotified: true,
      });
      await eventually(() => existsSync(join(dir, 'project', 'notes.txt')), 10_000, 'the approved write');
      expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello');

      const again = snotra(['inbox', 'deny', pending.id, '--state-dir', stateDir]);
      expect(again.status).toBe(1);
      expect(again.stderr).toContain('already_decided');

      const runs = await eventually(
        () => {
          const r = snotra(['runs', 'list', '--state-dir', stateDir, '--json']);
          const list = r.stdout
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { runId: string; status: string });
          return list.length === 1 && list[0]?.status === 'completed' ? list : null;
        },
        10_000,
        'the run to complete',
      );
      const audit = snotra(['audit', '--state-dir', stateDir, '--run', runs[0]!.runId, '--json']);
      const kinds = audit.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { kind: string }).kind);
      expect(kinds).toEqual([
        'proposed',
        'policy_decided',
        'approval_requested',
        'approval_resolved',
        'started',
        'completed',
      ]);
      expect(snotra(['audit', '--state-dir', stateDir, '--verify']).status).toBe(0);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    expect(out).toContain('"event":"stopped"');
  }, 90_000);

  it('refuses decisions from a process the runtime started (an agent’s shell) and from another local user', async () => {
    const fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    dirs.push(fx.dir);
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#x', text: 'y' } }],
          },
        },
      ],
    });
    const rt = await fx.start(model);
    try {
      await rt.runs.runTask('worker', 't', 'go');
      const pending = await eventually(
        () => runtimeInternals(rt).store.approvals.listPending()[0],
        10_000,
        'a pending approval',
      );

      // This process runs the runtime, so the CLI child descends from it, like an agent's shell command.
      const fromAgent = snotra(['inbox', 'approve', pending.id, '--state-dir', fx.stateDir]);
      expect(fromAgent.status).toBe(1);
      expect(fromAgent.stderr).toContain('decision_from_agent_process');
      expect(runtimeInternals(rt).store.approvals.get(pending.id)?.status).toBe('pending');

      // Another local user cannot reach the state dir, the database or the control socket.
      chmodSync(fx.dir, 0o755);
      const other = spawnSync(
        process.execPath,
        [
          '-e',
          `require('net').connect(${JSON.stringify(join(fx.stateDir, 'control.sock'))}).on('error', e => { console.log(e.code); process.exit(3) }).on('connect', () => process.exit(0))`,
        ],
        { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' },
      );
      expect(other.status).toBe(3);
      expect(other.stdout.trim()).toBe('EACCES');
      const readDb = spawnSync(
        process.execPath,
        ['-e', `require('fs').readFileSync(${JSON.stringify(join(fx.stateDir, 'snotra.db'))})`],
        {
          uid: 65534,
          gid: 65534,
          encoding: 'utf8',
          timeout: 10_000,
          killSignal: 'SIGKILL',
        },
      );
      expect(readDb.status).not.toBe(0);
      expect(readDb.stderr).toContain('EACCES');
      expect(runtimeInternals(rt).store.approvals.get(pending.id)?.status).toBe('pending');
    } finally {
      await rt.stop();
    }
  });
});
