/**
 * What the durability contract alone costs against LangGraph's park and resume, in one run
 * (`npx tsx bench/peers/floor.ts`): issue 19 asks for park and resume at ≥ 2× LangGraph's rate,
 * one at a time, with the approval fsynced before the run is reported parked.
 *
 * In interleaved pairs it measures (a) LangGraph's own bench (`inproc`: N parks, then N resumes,
 * one at a time; mean ms each = 1000 / rate) and (b) the project's durable point on this disk:
 * a small transaction committed in a WAL database at `synchronous = NORMAL`, as the store
 * opens its file, then the WAL flushed with the store's own fdatasync (async, as a park awaits
 * it, and blocking). With strace on the machine it also counts the fsyncs LangGraph makes per
 * park and per resume, as shipped and at `synchronous = FULL` (separate, untimed runs: strace
 * slows every system call).
 *
 * It prints the 2× budget (half of LangGraph's mean time per park and per resume), the fsync
 * within it, and what is left for everything else a park or a resume does.
 *
 * Env: N (default 1000), PAIRS (default 3), PEER_DIR as for bench/peers/run.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { fdatasyncFile, fdatasyncFileNow } from '../../store/group-sync.ts';
import { summarize } from '../stats.ts';
import { DURABLE_BENCH, peerSetup } from './peer-setup.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const N = Number(process.env.N ?? 1000);
const PAIRS = Number(process.env.PAIRS ?? 3);
for (const [name, v] of Object.entries({ N, PAIRS }))
  if (!Number.isInteger(v) || v < 1)
    throw new Error(`bench/peers/floor.ts: env ${name} must be a positive integer`);
const PEER_DIR = resolve(process.env.PEER_DIR ?? join(repo, '../shared/peers/langgraph'));
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const r2 = (x: number): number => Math.round(x * 100) / 100;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

const peer = peerSetup(PEER_DIR, repo, log);
const work = mkdtempSync(join(tmpdir(), 'snotra-floor-'));

interface LangGraphFigures {
  park_ms: number;
  resume_ms: number;
  synchronous: number;
}

function langgraph(k: number): LangGraphFigures {
  const db = join(work, `lg-${k}.db`);
  const r = spawnSync(process.execPath, ['bench.mjs', 'inproc', db, String(N)], {
    cwd: peer,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`LangGraph inproc exited ${r.status}: ${r.stderr}`);
  const o = JSON.parse(r.stdout.trim().split('\n').pop() as string);
  for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  return { park_ms: 1000 / o.park.per_s, resume_ms: 1000 / o.resume.per_s, synchronous: o.disk.synchronous };
}

/** Mean and median ms of a durable point: one small transaction committed, then the WAL flushed. */
async function durablePoint(k: number, flush: 'async' | 'blocking'): Promise<{ mean: number; p50: number }> {
  const path = join(work, `floor-${k}-${flush}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
  const body = Buffer.alloc(1_700, 7);
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const a = performance.now();
    db.transaction(() => insert.run(body))();
    if (flush === 'async') await fdatasyncFile(`${path}-wal`);
    else fdatasyncFileNow(`${path}-wal`);
    lat.push(performance.now() - a);
  }
  const mean = (performance.now() - t0) / N;
  db.close();
  for (const s of ['', '-wal', '-shm']) rmSync(path + s, { force: true });
  return { mean, p50: summarize(lat).median };
}

/** fsync and fdatasync calls of one LangGraph child under strace, or null without strace. */
function straceFsyncs(mode: 'park' | 'inproc', script = 'bench.mjs'): number | null {
  const db = join(work, `lg-strace-${mode}.db`);
  const r = spawnSync(
    'strace',
    ['-f', '-c', '-e', 'trace=fsync,fdatasync', process.execPath, script, mode, db, String(N)],
    { cwd: peer, encoding: 'utf8' },
  );
  for (const s of ['', '-wal', '-shm']) rmSync(db + s, { force: true });
  if (r.error !== undefined || r.status !== 0) return null;
  const total = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?total$/m.exec(r.stderr);
  return total ? Number(total[1]) : 0;
}

const load = { start: loadavg().map(r2) };
const lg: LangGraphFigures[] = [];
const asyncFlush: number[] = [];
const asyncFlushP50: number[] = [];
const blockingFlush: number[] = [];
for (let k = 0; k < PAIRS; k++) {
  const mine = async () => {
    const a = await durablePoint(k, 'async');
    const b = await durablePoint(k, 'blocking');
    asyncFlush.push(a.mean);
    asyncFlushP50.push(a.p50);
    blockingFlush.push(b.mean);
  };
  if (k % 2 === 0) {
    lg.push(langgraph(k));
    await mine();
  } else {
    await mine();
    lg.push(langgraph(k));
  }
  log(
    `pair ${k}: LangGraph park ${r3(lg[k]!.park_ms)} ms, resume ${r3(lg[k]!.resume_ms)} ms; durable point ${r3(asyncFlush[k]!)} ms`,
  );
}
const parkFsyncs = straceFsyncs('park');
const inprocFsyncs = straceFsyncs('inproc');
const durableParkFsyncs = straceFsyncs('park', DURABLE_BENCH);
const durableInprocFsyncs = straceFsyncs('inproc', DURABLE_BENCH);
const perRun = (park: number | null, inproc: number | null) => ({
  fsyncs_per_park: park === null ? null : r3(park / N),
  fsyncs_per_resume: park === null || inproc === null ? null : r3((inproc - park) / N),
});
rmSync(work, { recursive: true, force: true });

const med = (xs: number[]): number => summarize(xs).median;
const park = med(lg.map((x) => x.park_ms));
const resume = med(lg.map((x) => x.resume_ms));
const fsync = med(asyncFlush);
const out = {
  node: process.version,
  N,
  pairs: PAIRS,
  loadavg: { ...load, end: loadavg().map(r2) },
  langgraph: {
    synchronous: lg[0]!.synchronous,
    park_mean_ms: r3(park),
    resume_mean_ms: r3(resume),
    ...perRun(parkFsyncs, inprocFsyncs),
    // The same bench with its checkpointer at synchronous = FULL (PEERS_LANGGRAPH_SYNC=full).
    at_full: perRun(durableParkFsyncs, durableInprocFsyncs),
  },
  durable_point_ms: {
    async_mean: r3(fsync),
    async_p50: r3(med(asyncFlushP50)),
    blocking_mean: r3(med(blockingFlush)),
  },
  budget_at_2x_ms: { park: r3(park / 2), resume: r3(resume / 2) },
  left_after_one_fsync_ms: { park: r3(park / 2 - fsync), resume: r3(resume / 2 - fsync) },
};
log(
  `2x LangGraph: a park in ${out.budget_at_2x_ms.park} ms, a resume in ${out.budget_at_2x_ms.resume} ms; ` +
    `one durable point takes ${out.durable_point_ms.async_mean} ms, leaving ${out.left_after_one_fsync_ms.park} / ` +
    `${out.left_after_one_fsync_ms.resume} ms for all else (LangGraph: synchronous = ${out.langgraph.synchronous}, ` +
    `${out.langgraph.fsyncs_per_park ?? '?'} fsyncs per park, ${out.langgraph.fsyncs_per_resume ?? '?'} per resume)`,
);
process.stdout.write(`${JSON.stringify(out)}\n`);
