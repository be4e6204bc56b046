// Decisions per second of the policy engine for read, write and external calls (one core).
// Run: npx tsx bench/policy.bench.ts   — prints JSON; results recorded in bench/README.md.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluate } from '../policy/evaluate.ts';
import type { ToolCall } from '../policy/context.ts';
import { parseConfig } from '../runtime/config/load.ts';
import { agentPolicyContext } from '../runtime/policy/agent-context.ts';
import { createPolicyEnvironment } from '../runtime/policy/environment.ts';
import { registryFromConfig } from '../runtime/config/adapters/tool-registry.ts';
import { summarize } from './stats.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-bench-')));
mkdirSync(join(dir, 'p/a/b/c'), { recursive: true });
writeFileSync(join(dir, 'p/a/b/c/file.ts'), '');
const loaded = parseConfig(
  JSON.stringify({
    workspace: { roots: [{ id: 'p', path: 'p', access: 'read-write' }] },
    agents: { a: { mode: 'allow' } },
  }),
  join(dir, 'snotra.config.json'),
  dir,
);
const env = await createPolicyEnvironment(loaded);
const ctx = agentPolicyContext(loaded, 'a', {
  registry: registryFromConfig(loaded),
  paths: env.paths,
  shell: env.shell,
  sandboxed: env.sandbox.name !== 'none',
});

const CASES: Record<string, ToolCall> = {
  'external (http_request, no path)': {
    tool: 'http_request',
    args: { url: 'https://api.example.com/v1/items', method: 'POST' },
  },
  'git_query (read, no path)': { tool: 'git_query', args: { args: ['log', '--oneline'] } },
  'read_file (5-segment path)': { tool: 'read_file', args: { path: 'a/b/c/file.ts' } },
  'write_file (5-segment path)': { tool: 'write_file', args: { path: 'a/b/c/new.ts', content: 'x' } },
};

/** A sink the optimizer cannot drop: every decision's step is summed and printed. */
let sink = 0;

function opsPerSecond(call: ToolCall, ms: number): number {
  let n = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) sink += evaluate(call, ctx).step;
    n += 1000;
  }
  return n / ((performance.now() - start) / 1000);
}

const results: Record<string, unknown> = {};
for (const [name, call] of Object.entries(CASES)) {
  opsPerSecond(call, 300); // warm-up
  const runs = Array.from({ length: 7 }, () => opsPerSecond(call, 500));
  results[name] = { decisionsPerSecond: summarize(runs), decision: evaluate(call, ctx).decision };
}
/** Per-decision latency in microseconds (each sample one evaluate call). */
function latency(makeCall: (i: number) => ToolCall, n: number) {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const call = makeCall(i);
    const t = performance.now();
    sink += evaluate(call, ctx).step;
    samples.push((performance.now() - t) * 1000);
  }
  return summarize(samples);
}
const latencies = {
  'read_file, 5-segment path (µs)': latency(() => CASES['read_file (5-segment path)'] as ToolCall, 5000),
  // A distinct command each time, so the parse cache does not hide the parser's cost.
  'shell, typical command, uncached (µs)': latency(
    (i) => ({
      tool: 'shell',
      args: { command: `npm test -- --run src/file${i}.test.ts 2>&1 | tee out${i}.log` },
    }),
    3000,
  ),
  'shell, typical command, cached (µs)': latency(
    () => ({ tool: 'shell', args: { command: 'npm test -- --run 2>&1 | tee out.log' } }),
    3000,
  ),
};
console.log(JSON.stringify({ node: process.version, results, latencies, sink }, null, 2));
rmSync(dir, { recursive: true, force: true });
