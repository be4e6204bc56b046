// Throughput of search_files through the worker pool (batched, and one file per task) against
// the same scan run on the main thread, with the event-loop lag measured during each run; and
// read_file throughput. Run: npx tsx bench/tools.bench.ts — prints JSON.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createReadFileExecutor } from '../actors/tools/fs/read-file.ts';
import { FileWorkerPool } from '../actors/tools/search/pool.ts';
import { createSearchFilesExecutor, type SearchFilesResult } from '../actors/tools/search/search-files.ts';
import type { ToolExecutionContext } from '../actors/tools/types.ts';
import { BUILTIN_TOOLS } from '../policy/builtins.ts';
import type { Decision } from '../policy/decision.ts';
import { createPathGuard } from '../policy/paths/index.ts';
import type { WorkspaceRoot } from '../policy/roots.ts';
import { summarize } from './stats.ts';

const DIRS = 200;
const FILES_PER_DIR = 100;
const RUNS = 7;

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-bench-tools-')));
const root = join(dir, 'root');
for (let d = 0; d < DIRS; d++) {
  mkdirSync(join(root, 'tree', `d${d}`), { recursive: true });
  for (let f = 0; f < FILES_PER_DIR; f++) {
    const n = d * FILES_PER_DIR + f;
    const lines = Array.from(
      { length: 40 },
      (_, i) => `const value${i} = compute(${n}, ${i}); // filler text`,
    );
    if (n % 50 === 0) lines.push(`// NEEDLE ${n}`);
    writeFileSync(join(root, 'tree', `d${d}`, `f${f}.ts`), lines.join('\n'));
  }
}
writeFileSync(join(root, 'big.txt'), 'a line of text\n'.repeat(7000));
mkdirSync(join(dir, 'state'));
const guard = createPathGuard({ stateDir: join(dir, 'state'), configFile: join(dir, 'snotra.config.json') });
const roots: WorkspaceRoot[] = [
  { id: 'root', path: root, access: 'read-write', primary: true, source: 'workspace' },
];

function context(tool: keyof typeof BUILTIN_TOOLS, path: string): ToolExecutionContext {
  const resolved = guard.resolve('path', path, 'read', roots);
  if (!resolved.ok) throw new Error(resolved.message);
  const decision: Decision = {
    decision: 'allow',
    reason: 'mode_allow',
    risk: BUILTIN_TOOLS[tool].metadata.risk,
    rule: { id: 'mode.allow', source: 'mode' },
    targets: [resolved.target],
    humanRequired: false,
    step: 9,
  };
  return {
    runId: 'bench',
    callId: 'bench',
    idempotencyKey: 'bench',
    decision,
    roots,
    paths: guard,
    signal: new AbortController().signal,
    secrets: { resolve: () => Promise.reject(new Error('no secrets')) },
  };
}

/** Runs `work`, measuring wall time, the worst event-loop delay and the loop's busy time. */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ value: T; ms: number; maxLagMs: number; loopBusyMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  const used = performance.eventLoopUtilization(elu);
  histogram.disable();
  return { value, ms, maxLagMs: histogram.max / 1e6, loopBusyMs: used.active };
}

const total = DIRS * FILES_PER_DIR;
const results: Record<string, unknown> = { tree: { files: total, bytesPerFile: 2200 }, runs: RUNS };

async function searchRuns(name: string, filesPerTask: number, runs: number): Promise<void> {
  const pool = new FileWorkerPool({ maxQueue: 256 });
  const search = createSearchFilesExecutor({ pool, filesPerTask, maxMatches: 10_000, timeBudgetMs: 120_000 });
  await search.execute(
    { path: 'tree/d0', pattern: 'NEEDLE' },
    context('search_files', join(root, 'tree/d0')),
  );
  const ctx = context('search_files', join(root, 'tree'));
  const rates: number[] = [];
  const lags: number[] = [];
  const busy: number[] = [];
  let matches = 0;
  for (let i = 0; i < runs; i++) {
    const run = await measured(
      () => search.execute({ path: 'tree', pattern: 'NEEDLE \\d+' }, ctx) as Promise<SearchFilesResult>,
    );
    if (run.value.filesScanned !== total) throw new Error(`scanned ${run.value.filesScanned}`);
    matches = run.value.matches.length;
    rates.push(Math.round(total / (run.ms / 1000)));
    lags.push(Math.round(run.maxLagMs * 10) / 10);
    busy.push(Math.round(run.loopBusyMs * 10) / 10);
  }
  await pool.close();
  results[name] = {
    threads: pool.maxThreads,
    filesPerTask,
    filesPerSecond: summarize(rates),
    maxEventLoopLagMs: summarize(lags),
    eventLoopBusyMs: summarize(busy),
    matches,
  };
}

await searchRuns('search_files via pool (500 files per task)', 500, RUNS);
await searchRuns('search_files via pool (1 file per task)', 1, 3);

// The same scan on the main thread: what the pool saves the event loop from.
const { default: scan } = await import('../actors/tools/search/worker.mjs');
{
  const rates: number[] = [];
  const lags: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await measured(async () =>
      scan({
        base: join(root, 'tree'),
        singleFile: false,
        dirs: [''],
        files: [],
        pattern: 'NEEDLE \\d+',
        flags: '',
        maxFiles: total + 10,
        maxMatches: 10_000,
        maxFileBytes: 2 * 1024 * 1024,
        maxLineChars: 300,
        skipDirs: ['.git'],
        deadline: Date.now() + 120_000,
      }),
    );
    rates.push(Math.round(run.value.filesScanned / (run.ms / 1000)));
    lags.push(Math.round(run.ms));
  }
  results['search scan on the main thread (same code, no pool)'] = {
    filesPerSecond: summarize(rates),
    eventLoopBlockedMs: summarize(lags),
  };
}

{
  const read = createReadFileExecutor();
  const ctx = context('read_file', join(root, 'big.txt'));
  const small = context('read_file', join(root, 'tree', 'd0', 'f0.ts'));
  const rate = async (
    c: ToolExecutionContext,
    args: Record<string, unknown>,
    ms: number,
  ): Promise<number> => {
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      await read.execute(args, c);
      n += 1;
    }
    return Math.round(n / ((performance.now() - start) / 1000));
  };
  await rate(small, { path: join(root, 'tree', 'd0', 'f0.ts') }, 200);
  const smallRates: number[] = [];
  const rangeRates: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    smallRates.push(await rate(small, { path: join(root, 'tree', 'd0', 'f0.ts') }, 300));
    rangeRates.push(
      await rate(ctx, { path: join(root, 'big.txt'), startLine: 10_000, endLine: 10_100 }, 300),
    );
  }
  results['read_file (main thread, async I/O, verified open)'] = {
    smallFileReadsPerSecond: summarize(smallRates),
    lineRangeOf100KiBFileReadsPerSecond: summarize(rangeRates),
  };
}

rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(results, null, 2));
