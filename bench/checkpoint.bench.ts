/**
 * Checkpoint cost (issue 38): a root of 5,000 files (100 folders of 50, ~1 KB each), 10 files
 * changed between checkpoints. Reports the cold first checkpoint, the incremental one (median,
 * spread, p99), what each stores, a read-only call's cost (no checkpoint), the first checkpoint
 * of a restarted process (the prefilter read back from the state dir), a rewind, and the machine's
 * load average.
 * `npx tsx bench/checkpoint.bench.ts` prints JSON.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Checkpointer } from '../runtime/checkpoints/index.ts';
import { rewindTo } from '../runtime/checkpoints/rewind.ts';
import { summarize } from './stats.ts';

const FILES = 5_000;
const PER_DIR = 50;
const CHANGED = 10;
const ROUNDS = 60;

const loadAtStart = loadavg()[0];
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ck-bench-')));
const root = join(dir, 'root');
const state = join(dir, 'state');
mkdirSync(state);
const paths: string[] = [];
for (let i = 0; i < FILES; i++) {
  const d = join(root, `pkg${Math.floor(i / PER_DIR / 10)}`, `mod${Math.floor(i / PER_DIR)}`);
  if (i % PER_DIR === 0) mkdirSync(d, { recursive: true });
  const p = join(d, `file${i}.ts`);
  writeFileSync(p, `export const v${i} = ${'x'.repeat(1000)};\n`);
  paths.push(p);
}
const roots = [
  { id: 'root', path: root, access: 'read-write' as const, primary: true, source: 'workspace' as const },
];
const meta = (i: number) => ({ runId: 'r', callId: `c${i}`, sessionId: null, tool: 'shell' });
const shell = { risk: 'exec' as const, targets: [] };

let clock = 1_700_000_000_000;
const checkpoints = new Checkpointer(state, () => clock++);
let t = performance.now();
const cold = checkpoints.beforeCall(meta(0), shell, roots);
const coldMs = performance.now() - t;

/** The floor: one readdir per folder and one lstat per entry, nothing else. */
function bareWalk(abs: string): void {
  for (const name of readdirSync(abs)) {
    const p = join(abs, name);
    if (lstatSync(p).isDirectory()) bareWalk(p);
  }
}

const times: number[] = [];
const walks: number[] = [];
const stored: number[] = [];
let first = cold?.record.id ?? '';
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < CHANGED; k++) {
    const p = paths[(r * 7919 + k * 104729) % FILES] as string;
    writeFileSync(p, `export const changed = ${r}${k}; // ${'y'.repeat(900)}\n`);
  }
  t = performance.now();
  bareWalk(root);
  walks.push(performance.now() - t);
  t = performance.now();
  const taken = checkpoints.beforeCall(meta(r + 1), shell, roots);
  times.push(performance.now() - t);
  stored.push(taken?.storedBytes ?? 0);
  if (r === 0) first = taken?.record.id ?? first;
}

const readOnly: number[] = [];
for (let i = 0; i < 5; i++) {
  t = performance.now();
  for (let k = 0; k < 100_000; k++) checkpoints.beforeCall(meta(k), { risk: 'read', targets: [] }, roots);
  readOnly.push(((performance.now() - t) * 1e6) / 100_000);
}

// A restarted process (a new Checkpointer on the same state dir) with 10 files changed since.
for (let k = 0; k < CHANGED; k++)
  writeFileSync(paths[(k * 104729 + 17) % FILES] as string, `export const restarted = ${k};\n`);
const restarted = new Checkpointer(state, () => clock++);
t = performance.now();
const afterRestart = restarted.beforeCall(meta(998), shell, roots);
const restartChangedMs = performance.now() - t;

t = performance.now();
const rewound = rewindTo(state, first, { dryRun: false, now: () => clock++ });
const rewindMs = performance.now() - t;

const restart = new Checkpointer(state, () => clock++);
t = performance.now();
restart.beforeCall(meta(999), shell, roots);
const restartMs = performance.now() - t;

console.log(
  JSON.stringify(
    {
      root: { files: FILES, folders: FILES / PER_DIR, bytes: FILES * 1020 },
      loadAverage: { start: loadAtStart, end: loadavg()[0] },
      coldFirstCheckpointMs: Math.round(coldMs),
      coldStoredBytes: cold?.storedBytes,
      incrementalMs: summarize(times),
      bareWalkMs: summarize(walks),
      incrementalStoredBytes: summarize(stored),
      changedBytesPerRound: CHANGED * 930,
      readOnlyCallNs: summarize(readOnly),
      restartTenChangedMs: Math.round(restartChangedMs),
      restartTenChangedHashed: afterRestart?.hashed,
      afterRewindRestartFirstCheckpointMs: Math.round(restartMs),
      rewind: { ms: Math.round(rewindMs), changes: rewound.changes.length },
    },
    null,
    2,
  ),
);
rmSync(dir, { recursive: true, force: true });
