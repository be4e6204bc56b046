import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/runtime.ts';
import { BIN } from '../support/snotra-process.ts';

const TOKEN = 'bin-token-test-0123456789abcdef0123456789abcdef';

/** The live descendants of `pid` with their command names. */
function descendants(pid: number): { pid: number; comm: string }[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended meanwhile.
    }
  }
  const out: { pid: number; comm: string }[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent)
      if (pp === p) {
        try {
          out.push({ pid: c, comm: readFileSync(`/proc/${c}/comm`, 'utf8').trim() });
        } catch {
          continue;
        }
        walk(c);
      }
  };
  walk(pid);
  return out;
}

/** `snotra policy check --stdin` waits on its input: a live bin whose children can be read. */
function waitingBin(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, 'policy', 'check', '--stdin', '--json'], {
    env: { ...process.env, ...env, SNOTRA_SIDECAR_TOKEN: TOKEN },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  return { child, exited, out: () => out };
}

describe('the bin and the launcher token', () => {
  it('from the sources: tsx’s esbuild child is started after the token left the environment', async () => {
    // No transform cache: tsx starts esbuild for the first module it compiles, as on a fresh checkout.
    const bin = waitingBin({ SNOTRA_FROM_SOURCE: '1', TSX_DISABLE_CACHE: '1' });
    try {
      const esbuild = await eventually(
        () => descendants(bin.child.pid as number).find((c) => c.comm === 'esbuild'),
        60_000,
        'the esbuild child of tsx',
      );
      const environ = readFileSync(`/proc/${esbuild.pid}/environ`);
      expect(environ.includes(TOKEN)).toBe(false);
      expect(environ.includes('SNOTRA_SIDECAR_TOKEN')).toBe(false);
      // And the command still works.
      bin.child.stdin.end('{"tool":"read_file","args":{"path":"/etc/shadow"}}\n');
      expect(await bin.exited).toBe(0);
      expect(JSON.parse(bin.out())).toMatchObject({ decision: 'deny' });
    } finally {
      bin.child.kill('SIGKILL');
    }
  }, 90_000);

  it('compiled (dist/ fresh, as vitest builds it): no transpiler, no child at all', async () => {
    const bin = waitingBin({});
    try {
      bin.child.stdin.write('{"tool":"read_file","args":{"path":"/etc/shadow"}}\n');
      await eventually(() => (bin.out().includes('"deny"') ? true : undefined), 60_000, 'the first decision');
      expect(descendants(bin.child.pid as number)).toEqual([]);
      bin.child.stdin.end();
      expect(await bin.exited).toBe(0);
    } finally {
      bin.child.kill('SIGKILL');
    }
  }, 90_000);
});
