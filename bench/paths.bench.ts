/**
 * Latency of the path guard on the real file system: `resolve` of a 5-segment path to an
 * existing file (relative and absolute), of a missing file, through a symlink, and
 * `checkSensitive`. Plain tsx script: `npx tsx bench/paths.bench.ts`. Env: BENCH_ITERATIONS
 * (default 20000 per case). Prints one JSON document: per case median and p99 in microseconds.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPathGuard } from '../policy/paths/index.ts';
import type { WorkspaceRoot } from '../policy/roots.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20000);
const WARMUP = Math.min(2000, ITERATIONS);

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'snotra-paths-bench-')));
const proj = path.join(dir, 'proj');
fs.mkdirSync(path.join(proj, 'a/b/c/d'), { recursive: true });
fs.writeFileSync(path.join(proj, 'a/b/c/d/e.ts'), '');
fs.symlinkSync('a/b', path.join(proj, 'link'));
fs.mkdirSync(path.join(dir, 'home'));

const guard = createPathGuard({
  home: path.join(dir, 'home'),
  stateDir: path.join(proj, '.snotra'),
  configFile: path.join(proj, 'snotra.config.json'),
});
const roots: WorkspaceRoot[] = [
  { id: 'proj', path: proj, access: 'read-write', primary: true, source: 'workspace', deny: ['secrets/**'] },
];

const CASES: Record<string, () => unknown> = {
  'resolve: 5-segment existing file, relative': () => guard.resolve('path', 'a/b/c/d/e.ts', 'read', roots),
  'resolve: 5-segment existing file, absolute': () =>
    guard.resolve('path', path.join(proj, 'a/b/c/d/e.ts'), 'read', roots),
  'resolve: 5-segment missing file (write)': () => guard.resolve('path', 'a/b/c/d/new.ts', 'write', roots),
  'resolve: through a symlink': () => guard.resolve('path', 'link/c/d/e.ts', 'read', roots),
  'checkSensitive: 5-segment existing file': () => guard.checkSensitive('a/b/c/d/e.ts', 'read', roots),
};

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const results: Record<string, { medianUs: number; p99Us: number; n: number }> = {};
for (const [name, run] of Object.entries(CASES)) {
  const check = run() as { ok?: boolean } | null;
  if (check !== null && check.ok === false)
    throw new Error(`bench case "${name}" is denied: fix the fixture`);
  for (let i = 0; i < WARMUP; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    run();
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  samples.sort((a, b) => a - b);
  const round = (x: number): number => Math.round(x * 10) / 10;
  results[name] = {
    medianUs: round(percentile(samples, 0.5)),
    p99Us: round(percentile(samples, 0.99)),
    n: ITERATIONS,
  };
}
fs.rmSync(dir, { recursive: true, force: true });

console.log(
  JSON.stringify(
    { bench: 'paths', node: process.version, platform: `${process.platform}-${process.arch}`, results },
    null,
    2,
  ),
);
