/**
 * Process tree without escape (issue 11, build item 6), through the real runtime in its own
 * process: children that leave with `setsid sleep … &`, `setsid -f …` and `nohup setsid … &`
 * are gone within 5 s of the command's end (see runtime-sandbox.test.ts), of SIGTERM to the
 * runtime and of SIGKILL to it — the command's PID namespace takes every process with it.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createPathGuard } from '../../policy/paths/index.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createBubblewrapSandbox, hostRulesOf } from '../../runtime/sandbox/index.ts';
import { afterAll, describe, expect, it } from 'vitest';
import {
  daemonsScript,
  processesRunning,
  sandboxWorkspace,
  startRuntimeChild,
  uniqueSleeps,
  within,
  WORK_BASE,
} from './support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function running(sleeps: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const s of sleeps) if ((await processesRunning(['sleep', s])).length > 0) out.push(s);
  return out;
}

describe('setsid daemons of a shell call die with the runtime', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`are gone within 5 s of ${signal} to the runtime`, async () => {
      const ws = sandboxWorkspace(['write_file', 'shell']);
      dirs.push(ws.dir);
      // Three daemons, then a foreground sleep that keeps the command running.
      const [a, b, c, fg] = uniqueSleeps(4) as [string, string, string, string];
      // (Written to a file first: the shell analyzer would rightly send the loop to a human.)
      const content = `${daemonsScript(ws.project, [a, b, c])}\nsleep ${fg}\n`;
      const child = startRuntimeChild(ws, [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'daemons.sh', content } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: {
            kind: 'calls',
            calls: [{ id: 'c2', tool: 'shell', args: { command: 'sh daemons.sh' } }],
          },
        },
      ]);
      try {
        expect((await child.line('ready')).sandbox).toBe('bubblewrap');
        const all = [a, b, c, fg];
        const up = await within(30_000, async () => (await running(all)).length === 4);
        expect(up, `daemons never all ran: ${child.stderr()}`).toBe(true);
        for (const n of [1, 2, 3]) expect(existsSync(join(ws.project, `daemon-${n}.started`))).toBe(true);

        child.process.kill(signal);
        const exit = await child.exited;
        if (signal === 'SIGKILL') expect(exit.signal).toBe('SIGKILL');
        else expect(exit.code).toBe(0);
        let left = all;
        const gone = await within(5000, async () => (left = await running(all)).length === 0);
        expect(left).toEqual([]);
        expect(gone).toBe(true);
      } finally {
        child.process.kill('SIGKILL');
      }
    }, 90_000);
  }
});

describe('setsid daemons and the end of their command', () => {
  it('are gone within 5 s of the end of a sandboxed command, and (the control) outlive an unconfined one', async () => {
    const dir = realpathSync(mkdtempSync(join(WORK_BASE, 'snotra-sbx-end-')));
    dirs.push(dir);
    const guard = createPathGuard({ stateDir: join(dir, 'state'), configFile: join(dir, 'c.json') });
    const sandbox = createBubblewrapSandbox({ bwrap: '/usr/bin/bwrap', rules: hostRulesOf(guard) });
    const confined = new ProcessSupervisor({ killGraceMs: 300, sandbox });
    const unconfined = new ProcessSupervisor({ killGraceMs: 300 });
    const leftovers: number[] = [];
    try {
      for (const [name, supervisor] of [
        ['sandbox', confined],
        ['none', unconfined],
      ] as const) {
        const root = join(dir, name);
        mkdirSync(root);
        const sleeps = uniqueSleeps(3);
        const result = await supervisor.run({
          command: '/bin/sh',
          args: ['-c', daemonsScript(root, sleeps)],
          cwd: root,
          timeoutMs: 30_000,
          maxOutputBytes: 4096,
          confine: { roots: [{ path: root, access: 'read-write' }], network: false },
        });
        expect(result.exitCode, result.stderr).toBe(0);
        for (const n of [1, 2, 3]) expect(existsSync(join(root, `daemon-${n}.started`))).toBe(true);
        if (name === 'sandbox') {
          expect(await within(5000, async () => (await running(sleeps)).length === 0)).toBe(true);
        } else {
          // Without a PID namespace, process-group teardown cannot reach another session.
          expect(await running(sleeps)).toEqual(sleeps);
          for (const s of sleeps) leftovers.push(...(await processesRunning(['sleep', s])));
        }
      }
    } finally {
      for (const pid of leftovers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await confined.shutdown();
      await unconfined.shutdown();
    }
  }, 60_000);
});
