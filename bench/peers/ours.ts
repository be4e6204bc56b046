/**
 * The project's side of the LangGraph.js comparison (bench/peers/run.ts spawns it), through the
 * public entry point: `Runtime.start` in this process with a real embedded nats-server, a real
 * SQLite file, a scripted model and a no-op tool executor.
 *
 * The scenario matches `../shared/peers/langgraph/bench.mjs`: an unattended run whose only step
 * increments counter A (the model step that proposes the call: the work before the approval
 * point), needs approval for its call (external risk, agent in `ask` mode: the approval is
 * fsynced and audited, the run parks with its snapshot stored and no live actor), then on
 * approval the no-op executor increments counter B and the run completes. A counts model steps
 * 0 asked of the model, B executor calls.
 *
 * Modes (argv; one JSON line on stdout, progress on stderr):
 *   inproc DIR N     park N runs one at a time, measure the state file, resume them one at a time
 *   park DIR N       park N runs one at a time and exit (the runtime is stopped)
 *   resume DIR N     a fresh process: start the runtime on DIR and resume every parked run, one
 *                    at a time (`decide`: each decision fsynced on its own, like LangGraph's loop)
 *   resume-inflight DIR N C  the same with C decisions in flight (`decideAsync`: concurrent
 *                    decisions share an fsync; the decision is still durable before it is reported)
 *   inflight DIR N C park N runs with C in flight, then resume them with C in flight
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type * as ScriptedModule from '../../actors/model/scripted.ts';
import type * as LoadModule from '../../runtime/config/load.ts';
import type * as RuntimeModule from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const T0 = performance.now(); // before the heavy imports, like bench.mjs
const [, , mode, dirArg, nArg, cArg] = process.argv;

interface Timed {
  per_s: number;
  total_ms: number;
  p50_ms: number;
  p99_ms: number;
  cpu_ms: number;
  /** fsyncs the store started (group commit; `synchronous = FULL` commits are not on this path). */
  fsyncs?: number;
}

/**
 * Where the product's modules come from: with PEERS_OURS_DIST set (bench/peers/run.ts does, once
 * `dist/` is a build of the sources) the compiled JavaScript of that folder, as an installed
 * `snotra` runs it; else the TypeScript sources (this file then runs through tsx).
 */
const DIST = process.env.PEERS_OURS_DIST;
const product = (path: string): string =>
  DIST ? pathToFileURL(join(DIST, `${path}.js`)).href : new URL(`../../${path}.ts`, import.meta.url).href;

const counters = { A: 0, B: 0 };
/**
 * PEERS_TRACE=1: per-run phase timestamps (runTask called → JetStream ack → model step 0 →
 * approval requested → parked; decide → decide returned → executor → completed), medians on stderr.
 */
const TRACE = process.env.PEERS_TRACE === '1' || process.env.PEERS_TRACE === 'timeline';
/**
 * PEERS_TRACE=timeline: also every store call, bus publish, queue publish and fdatasync of the
 * run, with its start and duration, aggregated per park and per resume (one at a time only).
 */
const TIMELINE = process.env.PEERS_TRACE === 'timeline';
interface Span {
  label: string;
  start: number;
  dur: number;
}
let spans: Span[] = [];
let depth = 0;
function span<T>(label: string, fn: () => T): T {
  if (depth > 0) return fn(); // Only the outermost call: nested store calls are inside its time.
  const start = performance.now();
  depth++;
  try {
    return fn();
  } finally {
    depth--;
    spans.push({ label, start, dur: performance.now() - start });
  }
}
function wrapMethods(obj: object, prefix: string): void {
  const proto = Object.getPrototypeOf(obj) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === 'constructor' || typeof d?.value !== 'function') continue;
    const f = d.value as (...a: unknown[]) => unknown;
    Object.defineProperty(obj, name, {
      value: (...a: unknown[]) => span(`${prefix}.${name}`, () => f.apply(obj, a)),
    });
  }
}
/** Per operation (park or resume): summed duration and count of each label, and the wall time. */
const timelines: Record<'park' | 'resume', Array<{ wall: number; spans: Span[] }>> = { park: [], resume: [] };
function endTimeline(kind: 'park' | 'resume', t0: number): void {
  if (!TIMELINE) return;
  timelines[kind].push({ wall: performance.now() - t0, spans: spans.filter((s) => s.start >= t0) });
  spans = [];
}
process.on('exit', () => {
  if (!TIMELINE) return;
  const median = (v: number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1] ?? 0;
  for (const [kind, list] of Object.entries(timelines)) {
    if (list.length === 0) continue;
    const labels = new Set(list.flatMap((t) => t.spans.map((s) => s.label)));
    const rows = [...labels].map((label) => {
      const per = list.map((t) => t.spans.filter((s) => s.label === label));
      const sums = per.map((p) => p.reduce((a, s) => a + s.dur, 0)).sort((a, b) => a - b);
      return {
        label,
        p10: sums[Math.floor(sums.length * 0.1)] ?? 0,
        p90: sums[Math.floor(sums.length * 0.9)] ?? 0,
        calls: median(per.map((p) => p.length)),
        under05: sums.filter((v) => v < 0.5).length / Math.max(1, sums.length),
        ms: median(per.map((p) => p.reduce((a, s) => a + s.dur, 0))),
      };
    });
    rows.sort((a, b) => b.ms - a.ms);
    const wall = median(list.map((t) => t.wall));
    const inside = median(list.map((t) => t.spans.reduce((a, s) => a + s.dur, 0)));
    process.stderr.write(
      `timeline ${kind}: wall median ${wall.toFixed(3)} ms, inside traced calls ${inside.toFixed(3)} ms\n`,
    );
    for (const r of rows)
      process.stderr.write(
        `  ${r.ms.toFixed(3).padStart(8)} ms (p10 ${r.p10.toFixed(3)}, p90 ${r.p90.toFixed(3)}, ${(100 * r.under05).toFixed(0)} % under 0.5 ms)  x${r.calls}  ${r.label}\n`,
      );
    // The median operation's sequence, offsets from its start.
    const mid = [...list].sort((a, b) => a.wall - b.wall)[list.length >> 1];
    if (mid === undefined) continue;
    const t0 = (mid.spans[0]?.start ?? 0) - 0;
    process.stderr.write(`  sequence of the median ${kind} (${mid.wall.toFixed(3)} ms):\n`);
    for (const s of [...mid.spans].sort((a, b) => a.start - b.start))
      process.stderr.write(
        `    +${(s.start - t0).toFixed(3).padStart(7)}  ${s.dur.toFixed(3).padStart(6)}  ${s.label}\n`,
      );
  }
});
const phases = new Map<string, number[]>();
const at = new Map<string, number>();
function markPhase(runId: string, name: string): void {
  if (!TRACE) return;
  const now = performance.now();
  if (TIMELINE) spans.push({ label: `mark: ${name}`, start: now, dur: 0 });
  const prev = at.get(runId);
  at.set(runId, now);
  if (prev === undefined) return;
  let list = phases.get(name);
  if (list === undefined) phases.set(name, (list = []));
  list.push(now - prev);
}
process.on('exit', () => {
  if (!TRACE) return;
  const median = (v: number[]): number => [...v].sort((a, b) => a - b)[v.length >> 1] ?? NaN;
  for (const [name, v] of phases)
    process.stderr.write(`phase ${name}: median ${median(v).toFixed(3)} ms (n ${v.length})\n`);
});
/** More agents than one only so that C runs fit in flight: an agent holds at most 16 live runs. */
const agentsFor = (c: number): string[] => Array.from({ length: Math.ceil(c / 16) }, (_, i) => `p${i}`);

async function openRuntime(dir: string, agents: readonly string[]) {
  const [{ ScriptedModel }, { parseConfig }, { Runtime }] = await Promise.all([
    import(product('actors/model/scripted')) as Promise<typeof ScriptedModule>,
    import(product('runtime/config/load')) as Promise<typeof LoadModule>,
    import(product('runtime/runtime')) as Promise<typeof RuntimeModule>,
  ]);
  const tImported = performance.now();
  mkdirSync(dir, { recursive: true });
  mkdirSync(join(dir, 'project'), { recursive: true });
  const budget = { modelCalls: 5, toolCalls: 5, wallTimeMs: 24 * 60 * 60_000 };
  const agentConfig = Object.fromEntries(agents.map((a) => [a, { mode: 'ask', budget }]));
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      tools: { 'bench.notify': { source: 'extension', risk: 'external', approvalDefault: 'allow' } },
      agents: agentConfig,
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const script = [
    { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'bench.notify', args: { channel: '#ops' } }] } },
    { respond: { kind: 'final', text: 'done' } },
  ] as const;
  const scripted = new ScriptedModel(Object.fromEntries(agents.map((a) => [a, script])));
  const rt = await Runtime.start({
    loaded,
    model: {
      step(request) {
        markPhase(
          request.runId,
          request.step === 0 ? 'park: runTask resolved -> model step 0' : 'resume: executor -> model step 1',
        );
        if (request.step === 0) counters.A++; // the side effect before the approval point
        return scripted.step(request);
      },
    },
    executorOverrides: {
      'bench.notify': {
        async execute(_args, ctx) {
          markPhase(ctx.runId, 'resume: decide returned -> executor');
          counters.B++; // the approved call
          return { ok: true };
        },
      },
    },
    logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  if (TIMELINE) {
    for (const part of ['snapshots', 'audit', 'ledger', 'approvals'] as const)
      wrapMethods(runtimeInternals(rt).store[part], part);
    // WAL bytes appended since the last fsync, at each fsync (the WAL grows until a checkpoint).
    const wal = `${runtimeInternals(rt).store.path}-wal`;
    let walAt = 0;
    for (const name of ['sync', 'syncNow'] as const) {
      const f = runtimeInternals(rt).store[name].bind(runtimeInternals(rt).store) as (
        ...a: unknown[]
      ) => unknown;
      Object.defineProperty(runtimeInternals(rt).store, name, {
        configurable: true,
        value: (...a: unknown[]) => {
          const size = statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
          spans.push({
            label: `WAL KiB appended before ${name} (as ms)`,
            start: performance.now(),
            dur: (size - walAt) / 1024,
          });
          walAt = size;
          return f(...a);
        },
      });
    }
    for (const name of ['transaction', 'sync', 'syncNow', 'syncAfterCommit'] as const) {
      const f = runtimeInternals(rt).store[name].bind(runtimeInternals(rt).store) as (
        ...a: unknown[]
      ) => unknown;
      Object.defineProperty(runtimeInternals(rt).store, name, {
        configurable: true,
        value: (...a: unknown[]) => span(`store.${name}`, () => f(...a)),
      });
    }
    const publish = runtimeInternals(rt).bus.publish.bind(runtimeInternals(rt).bus);
    Object.defineProperty(runtimeInternals(rt).bus, 'publish', {
      value: (...a: Parameters<typeof publish>) => span(`bus.publish ${a[1]}`, () => publish(...a)),
    });
    const { default: fs } = await import('node:fs');
    const { syncBuiltinESMExports } = await import('node:module');
    const fdatasyncSync = fs.fdatasyncSync;
    fs.fdatasyncSync = (fd: number) => span('fdatasyncSync', () => fdatasyncSync(fd));
    syncBuiltinESMExports();
  }
  // Parked = the approval is pending (fsynced) and the run has no live actor (`run.parked`).
  const parkedWaiters = new Map<string, (approvalId: string) => void>();
  rt.runs.onRunEvent((e) => {
    if (e.type === 'approval.requested')
      markPhase(e.runId, 'park: model step 0 -> approval requested (fsynced)');
    if (e.type === 'run.parked') {
      markPhase(e.runId, 'park: approval requested -> parked');
      parkedWaiters.get(e.runId)?.(e.approvalId);
    }
    if (e.type === 'run.completed') markPhase(e.runId, 'resume: model step 1 -> completed');
  });
  let seq = 0;
  const park = async (): Promise<{ runId: string; approvalId: string }> => {
    const messageId = `m${process.pid}-${seq++}`;
    const agent = agents[seq % agents.length] ?? 'p0';
    const runId = `${agent}:${messageId}`;
    const parked = new Promise<string>((resolve) => parkedWaiters.set(runId, resolve));
    at.delete(runId);
    markPhase(runId, 'start');
    const tPark = performance.now();
    const sent = rt.runs.runTask(agent, `task-${messageId}`, 'tell #ops the nightly run is done', {
      messageId,
    });
    await sent;
    markPhase(runId, 'park: runTask called -> JetStream ack');
    const approvalId = await parked;
    parkedWaiters.delete(runId);
    endTimeline('park', tPark);
    return { runId, approvalId };
  };
  const resume = async (runId: string, approvalId: string, grouped = false): Promise<void> => {
    at.delete(runId);
    markPhase(runId, 'start');
    const tResume = performance.now();
    const done = rt.waitForRun(runId);
    markPhase(runId, 'resume: waitForRun (reads the snapshot)');
    // One at a time the synchronous form (one fsync on the main thread); in flight the grouped
    // one, whose concurrent decisions share an fsync.
    const r = grouped
      ? await rt.approvals.decideAsync(approvalId, 'approved', 'bench')
      : rt.decide(approvalId, 'approved', 'bench');
    markPhase(runId, 'resume: decide (fsynced)');
    if (!r.ok) throw new Error(`decide ${approvalId}: ${r.reason}`);
    const outcome = await done;
    if (outcome.status !== 'completed') throw new Error(`run ${runId} ${outcome.status}: ${outcome.reason}`);
    endTimeline('resume', tResume);
  };
  return { rt, park, resume, tImported };
}

/** Runs `fn(i)` for i < n with `c` in flight; latency per call, rate, and this process's CPU time. */
async function timed(
  n: number,
  c: number,
  fn: (i: number) => Promise<void>,
  stats?: () => { flushes: number },
): Promise<Timed> {
  const f0 = stats?.().flushes ?? 0;
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const a = performance.now();
      await fn(i);
      lat[i] = performance.now() - a;
    }
  };
  await Promise.all(Array.from({ length: Math.min(c, n) }, worker));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  lat.sort();
  return {
    per_s: (n * 1000) / ms,
    total_ms: ms,
    p50_ms: lat[n >> 1] ?? NaN,
    p99_ms: lat[Math.floor(n * 0.99)] ?? NaN,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    ...(stats ? { fsyncs: stats().flushes - f0 } : {}),
  };
}

/** The state file after a TRUNCATE checkpoint, and its bytes per table (dbstat). */
async function diskBytes(dir: string) {
  const { default: Database } = await import('better-sqlite3');
  const stateDir = join(dir, 'state');
  const dbFile = readdirSync(stateDir).find((f) => f.endsWith('.db') || f.endsWith('.sqlite'));
  if (dbFile === undefined) throw new Error(`no SQLite file in ${stateDir}`);
  const path = join(stateDir, dbFile);
  const raw = ['', '-wal', '-shm']
    .map((s) => path + s)
    .filter(existsSync)
    .reduce((s, f) => s + statSync(f).size, 0);
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const tables = db
      .prepare('select name, sum(pgsize) bytes from dbstat group by name order by bytes desc')
      .all() as Array<{ name: string; bytes: number }>;
    return {
      file: dbFile,
      journal_mode: db.pragma('journal_mode', { simple: true }),
      raw_db_wal_shm: raw,
      db_after_wal_truncate: statSync(path).size,
      tables: Object.fromEntries(tables.map((t) => [t.name, t.bytes])),
    };
  } finally {
    db.close();
  }
}

function progress(what: string): void {
  process.stderr.write(`ours ${mode}: ${what}\n`);
}

const dir = dirArg ?? '';
const n = Number(nArg ?? 1000);
if (mode === 'inproc') {
  const { rt, park, resume } = await openRuntime(dir, ['p0']);
  const parked: Array<{ runId: string; approvalId: string }> = [];
  const p = await timed(
    n,
    1,
    async () => void parked.push(await park()),
    () => runtimeInternals(rt).store.syncStats,
  );
  progress(`parked ${n}`);
  // Measured with the runtime running (its connection open), like LangGraph's saver.
  const disk = await diskBytes(dir);
  const r = await timed(
    n,
    1,
    async (i) => {
      const x = parked[i];
      if (x !== undefined) await resume(x.runId, x.approvalId);
    },
    () => runtimeInternals(rt).store.syncStats,
  );
  const skipped = runtimeInternals(rt).store.snapshots.unchangedSkipped;
  await rt.stop();
  console.log(JSON.stringify({ park: p, resume: r, disk, counters, snapshot_writes_skipped: skipped }));
} else if (mode === 'park') {
  const { rt, park } = await openRuntime(dir, ['p0']);
  await timed(n, 1, async () => void (await park()));
  await rt.stop();
  writeFileSync(join(dir, 'parked-counters.json'), JSON.stringify(counters));
} else if (mode === 'resume' || mode === 'resume-inflight') {
  const grouped = mode === 'resume-inflight';
  const { rt, resume, tImported } = await openRuntime(dir, ['p0']);
  const tOpened = performance.now();
  const pending = runtimeInternals(rt).store.approvals.listPending();
  if (pending.length !== n) throw new Error(`expected ${n} pending approvals, found ${pending.length}`);
  const r = await timed(
    n,
    grouped ? Number(cArg ?? 64) : 1,
    async (i) => {
      const a = pending[i];
      if (a?.runId) await resume(a.runId, a.id, grouped);
    },
    () => runtimeInternals(rt).store.syncStats,
  );
  await rt.stop();
  console.log(
    JSON.stringify({
      import_ms: tImported - T0,
      open_ms: tOpened - tImported,
      resume: r,
      counters,
      first_line_to_done_ms: performance.now() - T0,
    }),
  );
} else if (mode === 'inflight') {
  const c = Number(cArg ?? 64);
  const { rt, park, resume } = await openRuntime(dir, agentsFor(c));
  const parked: Array<{ runId: string; approvalId: string }> = [];
  const stats = () => runtimeInternals(rt).store.syncStats;
  const p = await timed(n, c, async () => void parked.push(await park()), stats);
  const r = await timed(
    n,
    c,
    async (i) => {
      const x = parked[i];
      if (x !== undefined) await resume(x.runId, x.approvalId, true);
    },
    stats,
  );
  await rt.stop();
  console.log(JSON.stringify({ park: p, resume: r, counters, in_flight: c }));
} else {
  throw new Error(
    `bench/peers/ours.ts: unknown mode ${JSON.stringify(mode)} (inproc, park, resume, resume-inflight, inflight)`,
  );
}
