// The OS sandbox's cost per shell call: wall time of `/bin/sh -c true` through the process
// supervisor, unconfined and inside bubblewrap (interleaved, so load changes hit both alike),
// and the planning step alone (finding the protected paths) on a small and a larger workspace.
// Run: npx tsx bench/sandbox.bench.ts — prints JSON. Env BENCH_ROUNDS (default 7), BENCH_CALLS (40).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Confinement } from '../actors/tools/process-runner.ts';
import { createPathGuard } from '../policy/paths/index.ts';
import { ProcessSupervisor } from '../runtime/processes/index.ts';
import { createBubblewrapSandbox, detectSandbox, hostRulesOf } from '../runtime/sandbox/index.ts';
import { summarize } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 40);
const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);

const status = detectSandbox();
if (status.name !== 'bubblewrap') {
  console.error(`sandbox bench: ${status.reason}`);
  process.exit(1);
}

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-bench-sandbox-')));
const small = join(dir, 'small');
const large = join(dir, 'large');
mkdirSync(join(small, '.git', 'hooks'), { recursive: true });
mkdirSync(join(dir, 'state'));
// A larger tree: 2,000 folders (with one nested repository per 100).
for (let d = 0; d < 2000; d++) {
  const sub = join(large, `pkg${d % 20}`, `mod${d}`);
  mkdirSync(sub, { recursive: true });
  writeFileSync(join(sub, 'index.ts'), 'export {};\n');
  if (d % 100 === 0) mkdirSync(join(sub, '.git', 'hooks'), { recursive: true });
}
const guard = createPathGuard({ stateDir: join(dir, 'state'), configFile: join(dir, 'snotra.config.json') });
const sandbox = createBubblewrapSandbox({ bwrap: status.program, rules: hostRulesOf(guard) });
const plain = new ProcessSupervisor();
const confined = new ProcessSupervisor({ sandbox });
const scope = (root: string): Confinement => ({
  roots: [{ path: root, access: 'read-write' }],
  network: false,
});

async function once(
  supervisor: ProcessSupervisor,
  confine: Confinement | undefined,
  cwd: string,
): Promise<number> {
  const started = performance.now();
  const result = await supervisor.run({
    command: '/bin/sh',
    args: ['-c', 'true'],
    cwd,
    timeoutMs: 30_000,
    maxOutputBytes: 4096,
    ...(confine ? { confine } : {}),
  });
  if (result.exitCode !== 0) throw new Error(`bench command failed: ${result.stderr}`);
  return performance.now() - started;
}

async function planOnce(root: string): Promise<number> {
  const started = performance.now();
  await sandbox.wrap(scope(root), root, '/bin/true', []);
  return performance.now() - started;
}

const ms = (x: number): number => Math.round(x * 100) / 100;
const report = (samples: number[], roundMedians: number[]) => {
  const s = summarize(samples);
  const r = summarize(roundMedians);
  return {
    medianMs: ms(s.median),
    p99Ms: ms(s.p99),
    maxMs: ms(s.max),
    roundMedianMinMs: ms(r.min),
    roundMedianMaxMs: ms(r.max),
    n: s.n,
  };
};

// Warm-up.
for (let i = 0; i < 5; i++) {
  await once(plain, undefined, small);
  await once(confined, scope(small), small);
}
const series = {
  plain: [] as number[],
  bwrap: [] as number[],
  bwrapLarge: [] as number[],
  planSmall: [] as number[],
  planLarge: [] as number[],
};
const rounds = {
  plain: [] as number[],
  bwrap: [] as number[],
  bwrapLarge: [] as number[],
  planSmall: [] as number[],
  planLarge: [] as number[],
};
for (let r = 0; r < ROUNDS; r++) {
  const round = {
    plain: [] as number[],
    bwrap: [] as number[],
    bwrapLarge: [] as number[],
    planSmall: [] as number[],
    planLarge: [] as number[],
  };
  for (let i = 0; i < CALLS; i++) {
    round.plain.push(await once(plain, undefined, small));
    round.bwrap.push(await once(confined, scope(small), small));
    if (i % 4 === 0) round.bwrapLarge.push(await once(confined, scope(large), large));
    round.planSmall.push(await planOnce(small));
    if (i % 4 === 0) round.planLarge.push(await planOnce(large));
  }
  for (const k of Object.keys(series) as (keyof typeof series)[]) {
    series[k].push(...round[k]);
    rounds[k].push(summarize(round[k]).median);
  }
}
await plain.shutdown();
await confined.shutdown();
rmSync(dir, { recursive: true, force: true });

const plainMedian = summarize(series.plain).median;
const bwrapMedian = summarize(series.bwrap).median;
console.log(
  JSON.stringify(
    {
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadAtStart,
        loadAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
      },
      bwrap: status.program,
      shellCallUnconfined: report(series.plain, rounds.plain),
      shellCallInBwrap: report(series.bwrap, rounds.bwrap),
      shellCallInBwrapLargeRoot: report(series.bwrapLarge, rounds.bwrapLarge),
      planOnlySmallRoot: report(series.planSmall, rounds.planSmall),
      planOnlyLargeRoot2000Dirs: report(series.planLarge, rounds.planLarge),
      overheadMedianMs: ms(bwrapMedian - plainMedian),
    },
    null,
    2,
  ),
);
