/**
 * Boot and fresh-process resume against LangGraph.js (issue 19), in interleaved pairs of fresh
 * processes. `npx tsx bench/boot.bench.ts` (env `N` parked runs, default 1000; `PAIRS`, default 3;
 * `PEER_DIR` as for `npm run bench:peers`, whose cache of the peer's install it reuses: run that
 * once first).
 *
 * N runs are parked once by `bench/peers/ours.ts park` and once by the peer's `bench.mjs park`;
 * every measurement runs on a fresh copy of that state. Per pair, alternating which side goes first:
 *
 * - ours `open`: `Runtime.start` on N parked runs (`bench/boot-child.ts open`), against the peer's
 *   time to open its checkpointer (`open_ms` of its fresh `resume` process);
 * - the peer's fresh process: spawn, open, resume all N one at a time, exit (`bench.mjs resume`);
 * - ours `decided`: the N approvals decided before the process starts (as `snotra inbox approve`
 *   does while no runtime runs: untimed), then spawn → the runtime resumes them at boot → every run
 *   completed → exit;
 * - ours `burst`: spawn → start → N decisions at once through `Runtime.decide` (each fsynced) →
 *   every run completed → exit.
 *
 * Our children run through tsx like `bench/peers/ours.ts` (imports cost more than compiled).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from './stats.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const N = Number(process.env.N ?? 1000);
const PAIRS = Number(process.env.PAIRS ?? 3);
for (const [name, v] of Object.entries({ N, PAIRS }))
  if (!Number.isInteger(v) || v < 1)
    throw new Error(`bench/boot.bench.ts: env ${name} must be a positive integer`);

const cacheRoot = process.env.XDG_CACHE_HOME
  ? join(process.env.XDG_CACHE_HOME, 'snotra-peers')
  : join(repo, 'node_modules/.cache/snotra-peers');
const peer = existsSync(cacheRoot)
  ? readdirSync(cacheRoot)
      .filter((d) => d.startsWith('langgraph-') && existsSync(join(cacheRoot, d, '.installed')))
      .map((d) => join(cacheRoot, d))[0]
  : undefined;
if (peer === undefined)
  throw new Error(
    `bench/boot.bench.ts: no installed peer under ${cacheRoot}; run \`N=10 PAIRS=1 npm run bench:peers\` once`,
  );
cpSync(
  join(resolve(process.env.PEER_DIR ?? join(repo, '../shared/peers/langgraph')), 'bench.mjs'),
  join(peer, 'bench.mjs'),
);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
function child(args: readonly string[], cwd: string): { out: Json; wall_ms: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  const wall = performance.now() - t;
  if (r.status !== 0)
    throw new Error(`${args.join(' ')} exited ${String(r.status)}: ${r.stderr.slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return { out: line === '' ? {} : (JSON.parse(line) as Json), wall_ms: wall };
}
const ours = (...a: (string | number)[]) => child(['--import', 'tsx', ...a.map(String)], repo);
const theirs = (...a: (string | number)[]) => child([join(peer, 'bench.mjs'), ...a.map(String)], peer);

const work = mkdtempSync(join(tmpdir(), 'snotra-boot-bench-'));
const tplOurs = join(work, 'ours-parked');
const tplTheirs = join(work, 'theirs-parked.db');
const fresh = (name: string): string => {
  const d = join(work, name);
  rmSync(d, { recursive: true, force: true });
  cpSync(tplOurs, d, { recursive: true });
  return d;
};
const freshDb = (name: string): string => {
  const f = join(work, name);
  for (const s of ['', '-wal', '-shm']) {
    rmSync(f + s, { force: true });
    if (existsSync(tplTheirs + s)) cpSync(tplTheirs + s, f + s);
  }
  return f;
};

const load0 = loadavg();
process.stderr.write(`boot bench: parking ${N} runs on each side\n`);
child(['--import', 'tsx', join(here, 'peers/ours.ts'), 'park', tplOurs, String(N)], repo);
theirs('park', tplTheirs, N);

const rows: Record<string, { ours: number[]; theirs: number[] }> = {};
const add = (metric: string, o: number, t: number) => {
  rows[metric] ??= { ours: [], theirs: [] };
  rows[metric].ours.push(o);
  rows[metric].theirs.push(t);
};
const counters: Json[] = [];
for (let p = 0; p < PAIRS; p++) {
  const oursFirst = p % 2 === 0;
  const runOurs = () => {
    const open = ours(join(here, 'boot-child.ts'), 'open', fresh('o-open'));
    const dDecided = fresh('o-decided');
    ours(join(here, 'boot-child.ts'), 'decide', dDecided);
    const decided = ours(join(here, 'boot-child.ts'), 'decided', dDecided, N);
    const burst = ours(join(here, 'boot-child.ts'), 'burst', fresh('o-burst'), N);
    return { open, decided, burst };
  };
  const runTheirs = () => theirs('resume', freshDb('t-resume.db'), N);
  let o: ReturnType<typeof runOurs>;
  let t: ReturnType<typeof runTheirs>;
  if (oursFirst) {
    o = runOurs();
    t = runTheirs();
  } else {
    t = runTheirs();
    o = runOurs();
  }
  add('start with N parked vs opening the checkpointer, ms', o.open.out.start_ms, t.out.open_ms);
  add('fresh process, decided before it started: spawn to all completed, ms', o.decided.wall_ms, t.wall_ms);
  add('… of which resuming them all, ms', o.decided.out.resume_all_ms, t.out.resume.total_ms);
  add(
    'fresh process, N decisions at once after start: spawn to all completed, ms',
    o.burst.wall_ms,
    t.wall_ms,
  );
  add('… of which deciding and resuming them all, ms', o.burst.out.resume_all_ms, t.out.resume.total_ms);
  add('imports, ms (tsx on our side)', o.burst.out.import_ms, t.out.import_ms);
  counters.push({
    open_start_cpu_ms: o.open.out.start_cpu_ms,
    decided: o.decided.out.counters,
    burst: o.burst.out.counters,
    theirs: t.out.counters,
  });
  process.stderr.write(
    `pair ${p}: ${JSON.stringify(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, [v.ours.at(-1), v.theirs.at(-1)]])))}\n`,
  );
}
const r3 = (x: number) => Number(x.toPrecision(3));
const table = Object.entries(rows).map(([metric, v]) => {
  const ratios = v.ours.map((x, i) => x / (v.theirs[i] as number));
  const s = summarize(ratios);
  return {
    metric,
    ours: r3(summarize(v.ours).median),
    theirs: r3(summarize(v.theirs).median),
    ratio: r3(s.median),
    ratio_min: r3(s.min),
    ratio_max: r3(s.max),
  };
});
console.log(
  JSON.stringify({ N, pairs: PAIRS, loadavg: { start: load0, end: loadavg() }, table, counters }, null, 1),
);
rmSync(work, { recursive: true, force: true });
