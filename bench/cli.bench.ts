// CLI latency, spawn to exit: the compiled bin (dist/) against the same bin on the sources through
// tsx (SNOTRA_FROM_SOURCE=1), and the compiled bin in the installed layout (bin/, dist/,
// package.json; no tsconfig.build.json, so no freshness check of the sources), interleaved;
// with CLI_BENCH_BASELINE=DIR (a checkout of another commit with its dist/ built) that commit's
// installed layout too. And `snotra start` spawn → ready line on embedded defaults, for each of
// them. Builds dist/ first when stale. `npx tsx bench/cli.bench.ts [runs]` prints JSON;
// `npx tsx bench/cli.bench.ts phases [runs]` prints the CPU of each phase of one read_file check
// inside one process (median of `runs` processes). With CLI_BENCH_SCHED=1 each command also
// reports its main thread's time on a CPU and its time waiting for one (the kernel's schedstat,
// written by a preload at exit): on this 2-vCPU VM the wall time moves with other engineers'
// load, the main thread's CPU much less.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'snotra.js');
const PHASES = process.argv[2] === 'phases';
const RUNS = Number(process.argv[PHASES ? 3 : 2] ?? 20);
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });

const work = mkdtempSync(join(tmpdir(), 'snotra-cli-bench-'));
const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(work, 'state-home'), NO_COLOR: '1' };
const SCHED = process.env.CLI_BENCH_SCHED === '1';
if (SCHED) {
  const preload = join(work, 'schedstat.cjs');
  writeFileSync(
    preload,
    `const fs = require('fs');
process.on('exit', () => {
  const [run, wait] = fs.readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'utf8').split(' ').map(Number);
  fs.writeSync(2, '\\nsched ' + run / 1e6 + ' ' + wait / 1e6 + '\\n');
});
`,
  );
  env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim();
}
const fromSource = { ...env, SNOTRA_FROM_SOURCE: '1' };

/** `root`'s bin, dist/ and package.json copied as an installed package has them, beside its node_modules. */
function installedLayout(root: string, name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  for (const entry of ['bin', 'dist', 'package.json'])
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return join(dir, 'bin', 'snotra.js');
}
type Sample = { wall: number; cpu: number; main?: number; runqWait?: number };
const INSTALLED = installedLayout(ROOT, 'installed');
const BASELINE = process.env.CLI_BENCH_BASELINE;
const BASELINE_BIN = BASELINE === undefined ? null : installedLayout(BASELINE, 'baseline');

/**
 * Wall time spawn → exit, and the child's CPU time (user + sys, from /usr/bin/time: less
 * load-sensitive); with CLI_BENCH_SCHED=1 also its main thread's CPU and run-queue wait.
 */
function once(args: string[], e: NodeJS.ProcessEnv, expect: number, bin = BIN): Sample {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, bin, ...args], {
    cwd: work,
    env: e,
    encoding: 'utf8',
  });
  const wall = performance.now() - t;
  if (r.status !== expect) throw new Error(`snotra ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const [, user, sys] = /cpu (\S+) (\S+)\s*$/.exec(r.stderr) ?? [];
  const sample: Sample = { wall, cpu: (Number(user) + Number(sys)) * 1000 };
  const sched = /^sched (\S+) (\S+)$/m.exec(r.stderr);
  if (sched !== null) return { ...sample, main: Number(sched[1]), runqWait: Number(sched[2]) };
  return sample;
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
  return { median: Math.round(q(0.5)), min: Math.round(s[0] as number), max: Math.round(q(1)) };
}

async function startToReady(e: NodeJS.ProcessEnv, bin = BIN): Promise<number> {
  const t = performance.now();
  const child = spawn(process.execPath, [bin, 'start', '--log-level', 'warn'], { cwd: work, env: e });
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

/** The CPU of each phase of one `read_file` check inside one process (the compiled modules). */
const PHASE_SCRIPT = `
const D = ${JSON.stringify(join(ROOT, 'dist') + '/')};
let c = process.cpuUsage();
const out = {};
const lap = (n) => { const u = process.cpuUsage(c); out[n] = (u.user + u.system) / 1000; c = process.cpuUsage(); };
out['node start (process.cpuUsage at first line)'] = (c.user + c.system) / 1000; c = process.cpuUsage();
await import('zod'); lap('import zod');
const { resolveConfig } = await import(D + 'runtime/config/load.js'); lap('import config/load (schemas, policy metadata)');
const { createPolicyChecker } = await import(D + 'runtime/policy/checker.js'); lap('import checker, evaluate');
await import(D + 'surfaces/cli/main.js'); await import(D + 'surfaces/cli/policy-check.js'); lap('import cli main, policy-check');
const loaded = resolveConfig(undefined, process.cwd()); lap('resolveConfig (embedded defaults)');
const checker = await createPolicyChecker(loaded, { lazyShell: true }); lap('createPolicyChecker');
await checker.decide(checker.defaultAgent, { tool: 'read_file', args: { path: 'notes.txt' } }); lap('first decision (read_file)');
await checker.decide(checker.defaultAgent, { tool: 'shell', args: { command: 'ls -la | wc -l' } }); lap('first shell decision (loads the parser)');
console.log(JSON.stringify(out));
`;

if (PHASES) {
  const runs: Record<string, number[]> = {};
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', PHASE_SCRIPT], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`phases: exit ${r.status}\n${r.stderr}`);
    for (const [k, v] of Object.entries(JSON.parse(r.stdout) as Record<string, number>))
      (runs[k] ??= []).push(v);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const result = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, Number(median(v).toFixed(1))]));
  console.log(
    JSON.stringify(
      { runs: RUNS, loadavg: loadavg().map((l) => Number(l.toFixed(2))), cpuMs: result },
      null,
      2,
    ),
  );
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

const CHECK = ['policy', 'check', '--tool', 'read_file', '--args', '{"path":"notes.txt"}', '--json'];
// Embedded defaults ask for an exec call: exit 10 (approval required), after loading the parser.
const CHECK_SHELL = [
  'policy',
  'check',
  '--tool',
  'shell',
  '--args',
  '{"command":"ls -la | wc -l"}',
  '--json',
];
const cases = {
  'policy check': { args: CHECK, exit: 0 },
  'policy check (shell)': { args: CHECK_SHELL, exit: 10 },
  '--version': { args: ['--version'], exit: 0 },
};
const result: Record<string, unknown> = { runs: RUNS, loadavg: loadavg().map((l) => Number(l.toFixed(2))) };
const variants: Record<string, (args: string[], exit: number) => Sample> = {
  compiled: (args, exit) => once(args, env, exit),
  installed: (args, exit) => once(args, env, exit, INSTALLED),
  ...(BASELINE_BIN === null
    ? {}
    : { baseline: (args: string[], exit: number) => once(args, env, exit, BASELINE_BIN) }),
  tsx: (args, exit) => once(args, fromSource, exit),
};
for (const [name, c] of Object.entries(cases)) {
  const samples: Record<string, Sample[]> = {};
  for (const [v, run] of Object.entries(variants)) {
    run(c.args, c.exit); // warm the file cache of each
    samples[v] = [];
  }
  for (let i = 0; i < RUNS; i++)
    for (const [v, run] of Object.entries(variants)) samples[v]?.push(run(c.args, c.exit));
  const both = (xs: Sample[]) => ({
    wall: stats(xs.map((x) => x.wall)),
    cpu: stats(xs.map((x) => x.cpu)),
    ...(SCHED
      ? {
          mainThreadCpu: stats(xs.map((x) => x.main ?? NaN)),
          mainThreadRunqWait: stats(xs.map((x) => x.runqWait ?? NaN)),
        }
      : {}),
  });
  result[name] = Object.fromEntries(Object.entries(samples).map(([v, xs]) => [v, both(xs)]));
}
const starts: Record<string, () => Promise<number>> = {
  compiled: () => startToReady(env),
  installed: () => startToReady(env, INSTALLED),
  ...(BASELINE_BIN === null ? {} : { baseline: () => startToReady(env, BASELINE_BIN) }),
  tsx: () => startToReady(fromSource),
};
const ready: Record<string, number[]> = Object.fromEntries(Object.keys(starts).map((v) => [v, []]));
for (let i = 0; i < Math.max(3, Math.round(RUNS / 4)); i++)
  for (const [v, start] of Object.entries(starts)) ready[v]?.push(await start());
result['start → ready'] = Object.fromEntries(Object.entries(ready).map(([v, xs]) => [v, stats(xs)]));
result.loadavgAfter = loadavg().map((l) => Number(l.toFixed(2)));
console.log(JSON.stringify(result, null, 2));
rmSync(work, { recursive: true, force: true });
