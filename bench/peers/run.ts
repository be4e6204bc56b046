/**
 * Side by side with LangGraph.js (`npm run bench:peers`): the LangGraph bench of
 * `../shared/peers/langgraph` against the project's equivalent (bench/peers/ours.ts), in
 * interleaved pairs of fresh processes, printing each ratio ours / theirs with its median and
 * spread (min–max of the pairs' ratios). Higher is better for rates, lower for times and bytes.
 *
 * Each pair runs, alternating which side goes first: `inproc` (N parked one at a time, the state
 * file measured, N resumed one at a time), `park` then a fresh `resume` process timed spawn to
 * exit, and the in-flight variant (N parked, then resumed, C at once: LangGraph with C concurrent
 * `graph.invoke` on distinct thread_ids). Counters A (work before the approval point) and B (the
 * approved call) are the correctness columns: A = N for the project, A = 2N for LangGraph (it
 * re-runs the interrupted node on resume).
 *
 * Set-up: the peer folder is copied to a cache folder keyed by the hash of its lockfile
 * (`$XDG_CACHE_HOME/snotra-peers` or `node_modules/.cache/snotra-peers`) and `npm ci` runs there
 * once (better-sqlite3 builds from source, ~1.5 min); the source is never written (read-only in CI).
 *
 * Our children run the compiled JavaScript, as an installed `snotra` does: `dist/` is built when
 * it is not a build of the sources as they are (`scripts/build.mjs --if-stale`), and ours.ts
 * itself is transpiled (types stripped) to the cache folder, importing the product from `dist/`.
 * PEERS_OURS=tsx runs them through tsx on the sources instead (TypeScript transpiled at run time).
 *
 * Env: N (runs per phase, default 1000), PAIRS (default 5), IN_FLIGHT (default 64),
 * PEER_DIR (default ../shared/peers/langgraph beside the repository), PEERS_OURS (dist | tsx),
 * PHASES (comma-separated, default inproc,fresh,inflight; `fresh_inflight` adds a fresh process
 * that resumes the N parked runs C in flight: ours deciding with `decideAsync`, whose concurrent
 * decisions share an fsync, LangGraph with C concurrent `graph.invoke` — a separate row, never
 * the one-at-a-time `fresh` row), PEERS_LANGGRAPH_SYNC (normal, as the peer ships: its
 * checkpointer fsyncs only at WAL checkpoints; full: every commit fsynced, the durability each of
 * our approvals has; the in-flight phases keep the peer's own setting).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from '../stats.ts';
import { DURABLE_BENCH, peerSetup } from './peer-setup.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const N = Number(process.env.N ?? 1000);
/** Which phases each pair runs (comma-separated; default all): inproc, fresh, inflight. */
const PHASES = (process.env.PHASES ?? 'inproc,fresh,inflight').split(',').map((p) => p.trim());
const PAIRS = Number(process.env.PAIRS ?? 5);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 64);
const PEER_DIR = resolve(process.env.PEER_DIR ?? join(repo, '../shared/peers/langgraph'));
for (const [name, v] of Object.entries({ N, PAIRS, IN_FLIGHT }))
  if (!Number.isInteger(v) || v < 1) throw new Error(`bench:peers: env ${name} must be a positive integer`);

const log = (s: string): void => void process.stderr.write(`${s}\n`);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Spawns a child, returns its last stdout line as JSON and its wall time spawn to exit. */
function child(
  cmd: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): { out: Json | null; wall_ms: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, cmd, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const wall = performance.now() - t;
  if (r.status !== 0) throw new Error(`bench:peers: ${cmd.join(' ')} exited ${r.status}: ${r.stderr}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return { out: last ? (JSON.parse(last) as Json) : null, wall_ms: wall };
}

/**
 * Our side as compiled JavaScript (the default): `dist/` brought up to date, ours.ts transpiled
 * beside the peer cache. Returns the script to run and the env that points it at `dist/`.
 */
async function compiledOurs(): Promise<{ script: string; env: NodeJS.ProcessEnv } | null> {
  const how = process.env.PEERS_OURS ?? 'dist';
  if (how === 'tsx') return null;
  if (how !== 'dist')
    throw new Error(`bench:peers: env PEERS_OURS must be dist or tsx, not ${JSON.stringify(how)}`);
  execFileSync(process.execPath, [join(repo, 'scripts/build.mjs'), '--if-stale'], {
    cwd: repo,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const { default: ts } = await import('typescript');
  const out = ts.transpileModule(readFileSync(join(here, 'ours.ts'), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: 'ours.ts',
  });
  // Inside the repository's node_modules, so its bare imports (better-sqlite3) resolve as ours.ts's.
  const dir = join(repo, 'node_modules/.cache/snotra-peers');
  mkdirSync(dir, { recursive: true });
  const script = join(dir, 'ours.mjs');
  writeFileSync(script, out.outputText);
  return { script, env: { ...process.env, PEERS_OURS_DIST: join(repo, 'dist') } };
}

const peer = peerSetup(PEER_DIR, repo, log);
const compiled = await compiledOurs();
const ours = (args: readonly (string | number)[]) =>
  compiled === null
    ? child(['--import', 'tsx', join(here, 'ours.ts'), ...args.map(String)], repo)
    : child([compiled.script, ...args.map(String)], repo, compiled.env);
/** PEERS_LANGGRAPH_SYNC=full: LangGraph's checkpointer fsyncs every commit (see durableVariant). */
const LG_SYNC = process.env.PEERS_LANGGRAPH_SYNC ?? 'normal';
if (LG_SYNC !== 'normal' && LG_SYNC !== 'full')
  throw new Error(
    `bench:peers: env PEERS_LANGGRAPH_SYNC must be normal or full, not ${JSON.stringify(LG_SYNC)}`,
  );
const lgBench = LG_SYNC === 'full' ? DURABLE_BENCH : 'bench.mjs';
const theirs = (args: readonly (string | number)[]) => child([lgBench, ...args.map(String)], peer);
const theirsInflight = (args: readonly (string | number)[]) =>
  child(['langgraph-inflight.mjs', ...args.map(String)], peer);

interface Side {
  inproc(k: number): Json;
  fresh(k: number): Json;
  fresh_inflight(k: number): Json;
  inflight(k: number): Json;
}

/** A fresh process's figures under `prefix` (spawn to exit, imports, open, resuming them all, counters). */
function freshFigures(prefix: string, b: { out: Json | null; wall_ms: number }): Json {
  const o = b.out ?? {};
  return {
    [`${prefix}_spawn_to_exit_ms`]: b.wall_ms,
    [`${prefix}_import_ms`]: o.import_ms,
    [`${prefix}_open_ms`]: o.open_ms,
    [`${prefix}_resume_all_ms`]: o.resume.total_ms,
    [`${prefix}_A`]: o.counters.A,
    [`${prefix}_B`]: o.counters.B,
    ...(o.resume.fsyncs === undefined ? {} : { [`${prefix}_fsyncs_per_run`]: o.resume.fsyncs / N }),
  };
}

const work = mkdtempSync(join(tmpdir(), 'snotra-peers-'));
const lgDb = (name: string): string => join(work, `${name}.db`);
const sides: Record<'ours' | 'theirs', Side> = {
  ours: {
    inproc: (k) => {
      const d = join(work, `ours-inproc-${k}`);
      const o = ours(['inproc', d, N]).out ?? {};
      rmSync(d, { recursive: true, force: true });
      return {
        park_per_s: o.park.per_s,
        park_p50_ms: o.park.p50_ms,
        park_cpu_ms_per_run: o.park.cpu_ms / N,
        resume_per_s: o.resume.per_s,
        resume_p50_ms: o.resume.p50_ms,
        resume_cpu_ms_per_run: o.resume.cpu_ms / N,
        bytes_per_parked_run: o.disk.db_after_wal_truncate / N,
        raw_bytes_per_parked_run: o.disk.raw_db_wal_shm / N,
        A: o.counters.A,
        B: o.counters.B,
        park_fsyncs_per_run: o.park.fsyncs / N,
        resume_fsyncs_per_run: o.resume.fsyncs / N,
        tables: o.disk.tables,
      };
    },
    fresh: (k) => {
      const d = join(work, `ours-parked-${k}`);
      ours(['park', d, N]);
      const b = ours(['resume', d, N]);
      rmSync(d, { recursive: true, force: true });
      return freshFigures('fresh', b);
    },
    fresh_inflight: (k) => {
      const d = join(work, `ours-parked-if-${k}`);
      ours(['park', d, N]);
      const b = ours(['resume-inflight', d, N, IN_FLIGHT]);
      rmSync(d, { recursive: true, force: true });
      return freshFigures('fresh_inflight', b);
    },
    inflight: (k) => {
      const d = join(work, `ours-inflight-${k}`);
      const o = ours(['inflight', d, N, IN_FLIGHT]).out ?? {};
      rmSync(d, { recursive: true, force: true });
      return inflightFigures(o);
    },
  },
  theirs: {
    inproc: (k) => {
      const db = lgDb(`lg-inproc-${k}`);
      const o = theirs(['inproc', db, N]).out ?? {};
      clean(db);
      return {
        park_per_s: o.park.per_s,
        park_p50_ms: o.park.p50_ms,
        resume_per_s: o.resume.per_s,
        resume_p50_ms: o.resume.p50_ms,
        bytes_per_parked_run: o.disk.db_after_wal_truncate / N,
        raw_bytes_per_parked_run: o.disk.raw_db_wal_shm / N,
        A: o.counters.A,
        B: o.counters.B,
      };
    },
    fresh: (k) => {
      const db = lgDb(`lg-parked-${k}`);
      theirs(['park', db, N]);
      const b = theirs(['resume', db, N]);
      clean(db);
      return freshFigures('fresh', b);
    },
    fresh_inflight: (k) => {
      const db = lgDb(`lg-parked-if-${k}`);
      theirs(['park', db, N]);
      const b = theirsInflight([db, N, IN_FLIGHT, 'resume']);
      clean(db);
      return freshFigures('fresh_inflight', b);
    },
    inflight: (k) => {
      const db = lgDb(`lg-inflight-${k}`);
      const o = theirsInflight([db, N, IN_FLIGHT]).out ?? {};
      clean(db);
      return inflightFigures(o);
    },
  },
};

function inflightFigures(o: Json): Json {
  return {
    inflight_park_per_s: o.park.per_s,
    inflight_resume_per_s: o.resume.per_s,
    inflight_cpu_ms_per_run: (o.park.cpu_ms + o.resume.cpu_ms) / N,
    inflight_A: o.counters.A,
    inflight_B: o.counters.B,
    ...(o.park.fsyncs === undefined
      ? {}
      : { inflight_fsyncs_per_run: (o.park.fsyncs + o.resume.fsyncs) / N }),
  };
}

function clean(db: string): void {
  for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
}

/** Metric → whether higher is better. */
const METRICS: Record<string, boolean> = {
  park_per_s: true,
  park_p50_ms: false,
  resume_per_s: true,
  resume_p50_ms: false,
  bytes_per_parked_run: false,
  raw_bytes_per_parked_run: false,
  fresh_spawn_to_exit_ms: false,
  fresh_resume_all_ms: false,
  fresh_open_ms: false,
  fresh_import_ms: false,
  fresh_inflight_spawn_to_exit_ms: false,
  fresh_inflight_resume_all_ms: false,
  fresh_inflight_open_ms: false,
  inflight_park_per_s: true,
  inflight_resume_per_s: true,
  inflight_cpu_ms_per_run: false,
};
const COUNTERS = [
  'A',
  'B',
  'fresh_A',
  'fresh_B',
  'fresh_inflight_A',
  'fresh_inflight_B',
  'inflight_A',
  'inflight_B',
];

const oursCode = compiled === null ? 'TypeScript sources through tsx' : 'compiled dist/ (node, no tsx)';
const load0 = loadavg();
const pairs: Array<{ ours: Json; theirs: Json }> = [];
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  if (execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }).trim())
    commit += '+dirty';
} catch {
  // not a git checkout: the commit stays unknown
}
log(
  `bench:peers: N=${N} PAIRS=${PAIRS} IN_FLIGHT=${IN_FLIGHT} commit ${commit}, ours ${oursCode}, load ${load0.map((x) => x.toFixed(1)).join(' ')}`,
);
for (let k = 0; k < PAIRS; k++) {
  const order: Array<'ours' | 'theirs'> = k % 2 === 0 ? ['ours', 'theirs'] : ['theirs', 'ours'];
  const got: Record<string, Json> = { ours: {}, theirs: {} };
  for (const phase of (['inproc', 'fresh', 'fresh_inflight', 'inflight'] as const).filter((p) =>
    PHASES.includes(p),
  )) {
    for (const side of order) Object.assign(got[side] ?? {}, sides[side][phase](k));
  }
  pairs.push({ ours: got.ours ?? {}, theirs: got.theirs ?? {} });
  log(`pair ${k}: ${JSON.stringify(pairs[k])}`);
}
rmSync(work, { recursive: true, force: true });

const r2 = (x: number): number => Math.round(x * 100) / 100;
const measured = ([m]: [string, boolean]): boolean => typeof pairs[0]?.ours[m] === 'number';
const rows = Object.entries(METRICS)
  .filter(measured)
  .map(([m, higher]) => {
    const o = summarize(pairs.map((p) => p.ours[m] as number));
    const t = summarize(pairs.map((p) => p.theirs[m] as number));
    const ratio = summarize(pairs.map((p) => (p.ours[m] as number) / (p.theirs[m] as number)));
    return {
      metric: m,
      better: higher ? 'higher' : 'lower',
      ours: r2(o.median),
      theirs: r2(t.median),
      ratio: r2(ratio.median),
      ratio_min: r2(ratio.min),
      ratio_max: r2(ratio.max),
    };
  });
const counters = Object.fromEntries(
  COUNTERS.filter((c) => pairs[0]?.ours[c] !== undefined).map((c) => [
    c,
    { ours: pairs.map((p) => p.ours[c]), theirs: pairs.map((p) => p.theirs[c]) },
  ]),
);
const load1 = loadavg();

const table = [
  `| measure (better) | ours median | LangGraph median | ratio ours/theirs median | ratio min–max |`,
  `| --- | --- | --- | --- | --- |`,
  ...rows.map(
    (r) =>
      `| ${r.metric} (${r.better}) | ${r.ours} | ${r.theirs} | **${r.ratio}** | ${r.ratio_min}–${r.ratio_max} |`,
  ),
  '',
  `| counter (N = ${N}) | ours | LangGraph |`,
  `| --- | --- | --- |`,
  ...Object.entries(counters).map(
    ([c, v]) => `| ${c} | ${[...new Set(v.ours)].join(', ')} | ${[...new Set(v.theirs)].join(', ')} |`,
  ),
].join('\n');
log(table);
const oursTables = pairs[0]?.ours.tables as Record<string, number> | undefined;
console.log(
  JSON.stringify({
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    commit,
    ours_code: oursCode,
    langgraph_synchronous: LG_SYNC,
    N,
    pairs: PAIRS,
    in_flight: IN_FLIGHT,
    loadavg: { start: load0, end: load1 },
    ratios: rows,
    counters,
    ours_bytes_per_run_by_table: oursTables
      ? Object.fromEntries(Object.entries(oursTables).map(([t, b]) => [t, r2(b / N)]))
      : null,
  }),
);
