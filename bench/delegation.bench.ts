// Latency of delegation: `intersect` at spawn (real path guard space), the step-4 guard check per
// call over a 3-ancestor chain (lexical paths), and the live `effectiveEnvelope` of a child.
// Run: npx tsx bench/delegation.bench.ts — prints JSON (µs per operation: median, p99).
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Target } from '../policy/decision.ts';
import {
  createDelegationGuard,
  effectiveEnvelope,
  guardPathSpace,
  intersect,
  lexicalPathSpace,
  type AuthorityEnvelope,
} from '../policy/delegation/index.ts';
import { createPathGuard } from '../policy/paths/index.ts';
import { summarize } from './stats.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5000);
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-deleg-bench-')));
for (const d of ['p/src/lib', 'p/docs', 'shared', 'state']) mkdirSync(join(dir, d), { recursive: true });
const guard = createPathGuard({
  stateDir: join(dir, 'state'),
  configFile: join(dir, 'state/c.json'),
  home: dir,
});
const space = guardPathSpace(guard);

const parent: AuthorityEnvelope = {
  mode: 'allow',
  tools: ['read_file', 'list_dir', 'search_files', 'git_query', 'write_file', 'shell', 'spawn_agent'],
  rules: [{ id: 'ask-external', risk: 'external', effect: 'ask' }],
  roots: [
    {
      id: 'p',
      path: join(dir, 'p'),
      access: 'read-write',
      primary: true,
      source: 'workspace',
      deny: ['**/*.pem'],
    },
    { id: 'docs', path: join(dir, 'p/docs'), access: 'read', primary: false, source: 'workspace' },
    { id: 'shared', path: join(dir, 'shared'), access: 'read', primary: false, source: 'workspace' },
  ],
  secrets: ['token'],
  standingApprovals: [],
  interaction: 'attended',
  mayDelegate: true,
};
const request = {
  tools: ['read_file', 'write_file', 'spawn_agent'],
  roots: [{ path: 'src' }, { path: 'docs' }],
  mayDelegate: true,
};
const child = intersect(parent, request, { interaction: 'attended', space }).envelope;
const grandchild = intersect(
  child,
  { roots: [{ path: 'lib' }] },
  { interaction: 'attended', space },
).envelope;
const chain = [parent, child, grandchild];
const check = createDelegationGuard(() => chain, { space: lexicalPathSpace() });
const target: Target = {
  argument: 'path',
  input: 'a.ts',
  resolved: join(dir, 'p/src/lib/a.ts'),
  root: 'p/src/lib',
  access: 'read-write',
};

const CASES: Record<string, () => unknown> = {
  'intersect (3 parent roots, 2 requested, real path guard)': () =>
    intersect(parent, request, { interaction: 'attended', space }),
  'guard.check write_file, 3 ancestors': () => check.check('write_file', 'write-local', [target]),
  'effectiveEnvelope of a grandchild (2 ancestors)': () =>
    effectiveEnvelope([parent, child], grandchild, space),
};

let sink = 0;
const results: Record<string, ReturnType<typeof summarize>> = {};
for (const [name, run] of Object.entries(CASES)) {
  for (let i = 0; i < Math.min(1000, ITERATIONS); i++) sink += run() === null ? 1 : 0;
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    sink += run() === null ? 1 : 0;
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  results[name] = summarize(samples);
}
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({ bench: 'delegation', unit: 'µs', node: process.version, sink, results }, null, 2),
);
