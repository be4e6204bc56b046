// CLI latency, spawn to exit: the compiled bin (dist/) against the same bin on the sources through
// tsx (SNOTRA_FROM_SOURCE=1), interleaved pairs; and `snotra start` spawn → ready line on embedded
// defaults. Builds dist/ first when stale. `npx tsx bench/cli.bench.ts [runs]` prints JSON.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'snotra.js');
const RUNS = Number(process.argv[2] ?? 20);
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });

const work = mkdtempSync(join(tmpdir(), 'snotra-cli-bench-'));
const env = { ...process.env, XDG_STATE_HOME: join(work, 'state-home'), NO_COLOR: '1' };
const fromSource = { ...env, SNOTRA_FROM_SOURCE: '1' };

/** Wall time spawn → exit, and the child's CPU time (user + sys, from /usr/bin/time: less load-sensitive). */
function once(args: string[], e: NodeJS.ProcessEnv, expect: number): { wall: number; cpu: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, BIN, ...args], {
    cwd: work,
    env: e,
    encoding: 'utf8',
  });
  const wall = performance.now() - t;
  if (r.status !== expect) throw new Error(`snotra ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const [, user, sys] = /cpu (\S+) (\S+)\s*$/.exec(r.stderr) ?? [];
  return { wall, cpu: (Number(user) + Number(sys)) * 1000 };
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
  return { median: Math.round(q(0.5)), min: Math.round(s[0] as number), max: Math.round(q(1)) };
}

async function startToReady(e: NodeJS.ProcessEnv): Promise<number> {
  const t = performance.now();
  const child = spawn(process.execPath, [BIN, 'start', '--log-level', 'warn'], { cwd: work, env: e });
  let out = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('"event":"ready"')) resolve(performance.now() - t);
    });
    child.once('exit', (code) => reject(new Error(`snotra start exited ${code} before ready`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return ms;
}

const CHECK = ['policy', 'check', '--tool', 'read_file', '--args', '{"path":"notes.txt"}', '--json'];
const cases = {
  'policy check': { args: CHECK, exit: 0 },
  '--version': { args: ['--version'], exit: 0 },
};
const result: Record<string, unknown> = { runs: RUNS, loadavg: loadavg().map((l) => Number(l.toFixed(2))) };
for (const [name, c] of Object.entries(cases)) {
  once(c.args, env, c.exit); // warm the file cache of both
  once(c.args, fromSource, c.exit);
  const compiled: { wall: number; cpu: number }[] = [];
  const tsx: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    compiled.push(once(c.args, env, c.exit));
    tsx.push(once(c.args, fromSource, c.exit));
  }
  const both = (xs: { wall: number; cpu: number }[]) => ({
    wall: stats(xs.map((x) => x.wall)),
    cpu: stats(xs.map((x) => x.cpu)),
  });
  result[name] = { compiled: both(compiled), tsx: both(tsx) };
}
const ready: number[] = [];
const readyTsx: number[] = [];
for (let i = 0; i < Math.max(3, Math.round(RUNS / 4)); i++) {
  ready.push(await startToReady(env));
  readyTsx.push(await startToReady(fromSource));
}
result['start → ready'] = { compiled: stats(ready), tsx: stats(readyTsx) };
result.loadavgAfter = loadavg().map((l) => Number(l.toFixed(2)));
console.log(JSON.stringify(result, null, 2));
rmSync(work, { recursive: true, force: true });
