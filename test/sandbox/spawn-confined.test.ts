/**
 * The supervisor's API for long-lived confined children (MCP stdio servers later): a child
 * spoken to over stdin/stdout runs in its own PID namespace with the sandbox's mounts, and
 * `terminate()` ends it and everything it started.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPathGuard } from '../../policy/paths/index.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createBubblewrapSandbox, hostRulesOf } from '../../runtime/sandbox/index.ts';
import { processesRunning, uniqueSleeps, within, WORK_BASE } from './support.ts';

const dir = realpathSync(mkdtempSync(join(WORK_BASE, 'snotra-sbx-spawn-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('spawnConfined', () => {
  it('runs a long-lived stdio child in the sandbox and ends its whole namespace on terminate()', async () => {
    const root = join(dir, 'root');
    mkdirSync(root);
    const guard = createPathGuard({ stateDir: join(dir, 'state'), configFile: join(dir, 'c.json') });
    const sandbox = createBubblewrapSandbox({ bwrap: '/usr/bin/bwrap', rules: hostRulesOf(guard) });
    const supervisor = new ProcessSupervisor({ killGraceMs: 300, sandbox });
    expect(supervisor.sandbox).toBe('bubblewrap');
    const [daemon] = uniqueSleeps(1) as [string];
    try {
      const child = await supervisor.spawnConfined({
        command: '/bin/sh',
        args: ['-c', `setsid sleep ${daemon} & echo "pid=$$"; touch /etc/x 2>/dev/null || echo ro; exec cat`],
        cwd: root,
        stdin: 'pipe',
        label: 'echo-server',
        confine: { roots: [{ path: root, access: 'read-write' }], network: false },
      });
      expect(supervisor.children.map((c) => c.label)).toEqual(['echo-server']);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += String(d)));
      child.stdin?.write('ping\n');
      expect(await within(10_000, async () => out.includes('ping'))).toBe(true);
      // PID 1 is the namespace's init; the command is the first process after it.
      expect(out).toContain('pid=2');
      expect(out).toContain('ro');
      expect(await within(10_000, async () => (await processesRunning(['sleep', daemon])).length === 1)).toBe(
        true,
      );
      await child.terminate();
      expect(await within(5000, async () => (await processesRunning(['sleep', daemon])).length === 0)).toBe(
        true,
      );
    } finally {
      await supervisor.shutdown();
    }
  });

  it('runs a program whose script lives under /tmp (hidden by the private /tmp otherwise), read-only', async () => {
    const root = join(dir, 'root-programs');
    mkdirSync(root);
    const scripts = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-sbx-program-')));
    const script = join(scripts, 'server.mjs');
    writeFileSync(
      script,
      "import { writeFileSync } from 'node:fs';\n" +
        "let ro = 'writable';\n" +
        `try { writeFileSync(${JSON.stringify(join(scripts, 'x'))}, 'x'); } catch { ro = 'ro'; }\n` +
        "process.stdout.write('server up ' + ro + '\\n');\n",
    );
    const guard = createPathGuard({ stateDir: join(dir, 'state'), configFile: join(dir, 'c.json') });
    const sandbox = createBubblewrapSandbox({ bwrap: '/usr/bin/bwrap', rules: hostRulesOf(guard) });
    const supervisor = new ProcessSupervisor({ killGraceMs: 300, sandbox });
    try {
      const start = (programs?: string[]) =>
        supervisor.spawnConfined({
          command: process.execPath,
          args: [script],
          cwd: root,
          stdin: 'pipe',
          label: 'tmp-server',
          confine: {
            roots: [{ path: root, access: 'read-write' }],
            network: false,
            ...(programs ? { programs } : {}),
          },
        });
      const read = async (child: Awaited<ReturnType<typeof start>>) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += String(d)));
        child.stderr?.on('data', (d: Buffer) => (out += String(d)));
        await within(10_000, async () => out.includes('server up') || out.includes('Cannot find module'));
        await child.terminate();
        return out;
      };
      // Without it the script is out of sight; with it, it runs and cannot write beside itself.
      expect(await read(await start())).toContain('Cannot find module');
      expect(await read(await start([script]))).toContain('server up ro');
    } finally {
      await supervisor.shutdown();
      rmSync(scripts, { recursive: true, force: true });
    }
  });
});
