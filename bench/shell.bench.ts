// Latency of shell command analysis (policy/shell): analyze() of a typical command (uncached
// and cached), and a bare tree-sitter parse of the same command. One call per sample.
// Run: npx tsx bench/shell.bench.ts   — prints JSON (microseconds: median, p99, min, max, n).
import { createShellAnalyzer } from '../policy/shell/index.ts';
import { createBashParser } from '../policy/shell/syntax/parser.ts';
import { summarize } from './stats.ts';

const TYPICAL = 'cd packages/app && npm test -- --run 2>&1 | tee /tmp/test.log';
const HEAVY =
  'sudo env FOO=1 bash -c \'find . -name "*.log" -mtime +7 -exec rm -f {} + && git push origin main\' > /tmp/out.log 2>&1';
const SAMPLES = 5000;
const WARMUP = 500;

/** A sink the optimizer cannot drop. */
let sink = 0;

/** Microsecond samples of `fn`, one call each, after a warm-up. */
function sample(fn: () => number): ReturnType<typeof summarize> {
  for (let i = 0; i < WARMUP; i++) sink += fn();
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    sink += fn();
    out.push((performance.now() - t) * 1000);
  }
  const s = summarize(out);
  const round = (x: number): number => Math.round(x * 10) / 10;
  return { median: round(s.median), p99: round(s.p99), min: round(s.min), max: round(s.max), n: s.n };
}

const uncached = await createShellAnalyzer({ cacheSize: 0 });
const cached = await createShellAnalyzer();
const parser = await createBashParser();

const results = {
  unit: 'microseconds per call',
  typicalCommand: TYPICAL,
  'analyze typical (uncached)': sample(() => uncached.analyze(TYPICAL).kind.length),
  'analyze typical (cached)': sample(() => cached.analyze(TYPICAL).kind.length),
  'analyze heavy (uncached: sudo env bash -c find -exec)': sample(() => uncached.analyze(HEAVY).kind.length),
  'parse 1 command (tree-sitter only)': sample(
    () => parser.withTree(TYPICAL, (root) => root.childCount) ?? 0,
  ),
  verdict: uncached.analyze(TYPICAL),
  sink,
};
console.log(JSON.stringify(results, null, 2));
