/**
 * End-to-end runtime costs with a real embedded nats-server (JetStream agent queue) and a real
 * SQLite file in a temp state dir, both started by `Runtime.start` itself. The model is scripted
 * (instant), tool executors are trivial, logs go to a discarding stream.
 *
 * Run: `node --expose-gc --import tsx bench/runtime.bench.ts` (or `npx tsx bench/runtime.bench.ts`:
 * the script then exposes `gc` itself through V8 flags). Prints one JSON document (ms, 3 decimals).
 *
 * Parts:
 *  1. Tool-call overhead: attended `chat` runs of an agent in `allow` mode, interleaved per round:
 *     `[final]` (no call), `[call bench.noop, final]` (custom no-op tool: policy with no path)
 *     and `[call read_file, final]` (path canonicalized on the real FS, trivial executor). Each run
 *     is timed end to end (bus → agent → run → model → policy → audit → ledger → executor →
 *     observation → model → outcome); the per-call overhead is the difference of medians, and is
 *     also measured inside each run as the time from the model step that proposed the call to the
 *     model step that receives its observation (a real per-call distribution for p50/p99).
 *  2. Park + resume: unattended `runTask` of an agent in `ask` mode whose call (external risk)
 *     needs approval; time to parked (approval pending, actor stopped) and from `decide` to
 *     `waitForRun` resolving.
 *  3. Boot with N parked runs (10,000 by default): real parked runs created by `runTask`, 512 at a
 *     time (32 agents × 16: an agent holds at most 16 runs and parked ones keep their slot until
 *     decided, so the runtime is restarted after each batch, which also gives boot time against
 *     N). Runs the time budget could not create are cloned from a real parked run through
 *     `runtime.store` (snapshot with new ids + its approval, in one transaction), and the report
 *     says how many. Then `Runtime.start` is timed 3 times (restore, re-arm approval deadlines),
 *     with a breakdown of the store reads boot does, one resume, and the idle event-loop load.
 *  4. Memory: heap per parked run (boot with N vs boot empty, after full GCs) and per live agent
 *     (M agents vs 1: an agent actor and its JetStream consumer; nats-server RSS sampled too).
 *     `Runtime.start` does not wait for consumers to be created, so boot time hides their cost.
 *
 *  5. Allowed-call rate (`callRate`): allowed no-op calls (`bench.noop`, agent in `allow` mode)
 *     through the whole runtime, one run at a time and with 64 runs in flight (4 agents × 16):
 *     each run asks for BENCH_CALL_STEPS model steps of BENCH_CALLS_PER_STEP calls, then answers.
 *     Calls per second over the wall time, and the per-call time inside a step (executor to next
 *     executor: observation, the next call's audit, policy decision and ledger rows) as p50/p99.
 *     Targets (issue 19): p50 < 0.5 ms, ≥ 10,000 calls/s with 64 in flight.
 *
 * Env: BENCH_RUNS (part 1 runs per variant, default 300), BENCH_WARMUP (default 50),
 * BENCH_PARK_RUNS (part 2, default 100), BENCH_PARKED (part 3, default 10000),
 * BENCH_CREATE_BUDGET_MS (part 3 creation budget, default 150000), BENCH_AGENTS (part 4 M, default 50),
 * BENCH_CALL_RUNS (part 5 runs per variant, default 128), BENCH_CALL_STEPS (default 5),
 * BENCH_CALLS_PER_STEP (default 20),
 * BENCH_PARTS (comma-separated: toolCall,parkResume,boot,agents,callRate; default all).
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ScriptedModel, type ScriptedStep } from '../actors/model/scripted.ts';
import type { ModelProvider, ModelStepRequest } from '../actors/model/provider.ts';
import type { ToolExecutor } from '../actors/tools/types.ts';
import type { ModelStepOutput } from '../machines/run/types.ts';
import { parseConfig, type LoadedConfig } from '../runtime/config/load.ts';
import { Runtime } from '../runtime/runtime.ts';
import type { ApprovalRecord } from '../store/index.ts';
import { summarize } from './stats.ts';
import { runtimeInternals } from '../runtime/testing.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 50);
const PARK_RUNS = Number(process.env.BENCH_PARK_RUNS ?? 100);
const PARKED = Number(process.env.BENCH_PARKED ?? 10_000);
const CREATE_BUDGET_MS = Number(process.env.BENCH_CREATE_BUDGET_MS ?? 150_000);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
/** Which parts to run (comma-separated names as in the output), default all. */
const PARTS = (process.env.BENCH_PARTS ?? 'toolCall,parkResume,boot,agents,callRate').split(',');
const CALL_RUNS = Number(process.env.BENCH_CALL_RUNS ?? 128);
const CALL_STEPS = Number(process.env.BENCH_CALL_STEPS ?? 5);
const CALLS_PER_STEP = Number(process.env.BENCH_CALLS_PER_STEP ?? 20);
const CALL_AGENTS = 4;
/** Agents used to create parked runs; each holds at most 16 runs (the agent machine's cap). */
const PARK_AGENTS = 32;
const PER_AGENT = 16;
const BOOTS = 3;

const started = performance.now();
const load0 = loadavg();

// ---------------------------------------------------------------------------------------------
// Helpers

const gcExposed = typeof globalThis.gc === 'function';
if (!gcExposed) setFlagsFromString('--expose-gc');
const gc: () => void = gcExposed ? (globalThis.gc as () => void) : (runInNewContext('gc') as () => void);

/** Heap used and RSS of this process after full collections. */
async function memory(): Promise<{ heap: number; rss: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

const ms = (x: number): number => Math.round(x * 1000) / 1000;
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));

function stats(samples: readonly number[]) {
  const s = summarize(samples);
  return { p50: ms(s.median), p99: ms(s.p99), min: ms(s.min), max: ms(s.max), n: s.n };
}

/** Counts refusals logged by the agent actor (message over its concurrent-run cap). */
let refusals = 0;
const discard = (): Writable =>
  new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (chunk.includes('message refused')) refusals++;
      cb();
    },
  });

/** Timestamps of model steps and executor calls per run, for the in-run tool-call overhead. */
const marks = new Map<string, { step: number[]; exec: number[] }>();
function mark(runId: string): { step: number[]; exec: number[] } {
  let m = marks.get(runId);
  if (m === undefined) marks.set(runId, (m = { step: [], exec: [] }));
  return m;
}

/** The scripted model, timestamping each step it is asked for. */
class TimedModel implements ModelProvider {
  constructor(private readonly inner: ModelProvider) {}
  step(request: ModelStepRequest): Promise<ModelStepOutput> {
    mark(request.runId).step[request.step] = performance.now();
    return this.inner.step(request);
  }
}

const trivial: ToolExecutor = {
  async execute(_args, ctx) {
    mark(ctx.runId).exec.push(performance.now());
    return { ok: true };
  },
};

const TOOLS = {
  'bench.noop': { source: 'extension', risk: 'read', approvalDefault: 'allow', idempotent: true },
  'bench.notify': { source: 'extension', risk: 'external', approvalDefault: 'allow' },
};
const EXECUTORS: Record<string, ToolExecutor> = {
  'bench.noop': trivial,
  'bench.notify': trivial,
  read_file: trivial,
};

const call = (tool: string, args: Record<string, unknown>): ScriptedStep => ({
  respond: { kind: 'calls', calls: [{ id: 'c1', tool, args }] },
});
const FINAL: ScriptedStep = { respond: { kind: 'final', text: 'done' } };
const SCRIPTS: Record<string, ScriptedStep[]> = {
  final: [FINAL],
  noop: [call('bench.noop', { n: 1 }), FINAL],
  readfile: [call('read_file', { path: 'src/lib/util/a.ts' }), FINAL],
  parker: [call('bench.notify', { channel: '#ops', text: 'nightly done' }), FINAL],
};
/** Part 5: steps of many allowed no-op calls each, then the answer. */
for (let a = 0; a < CALL_AGENTS; a++) {
  SCRIPTS[`flood${a}`] = [
    ...Array.from({ length: CALL_STEPS }, (_, step) => ({
      respond: {
        kind: 'calls' as const,
        calls: Array.from({ length: CALLS_PER_STEP }, (_, i) => ({
          id: `s${step}c${i}`,
          tool: 'bench.noop',
          args: { n: i },
        })),
      },
    })),
    FINAL,
  ];
}
const BUDGET = { modelCalls: 5, toolCalls: 5, wallTimeMs: 24 * 60 * 60_000 };

interface Env {
  readonly dir: string;
  readonly loaded: LoadedConfig;
  start(): Promise<Runtime>;
  cleanup(): void;
}

/** A temp workspace (one read-write root with a 5-segment file) and state dir with `agents`. */
function env(agents: Record<string, Record<string, unknown>>): Env {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-rt-bench-')));
  mkdirSync(join(dir, 'project/src/lib/util'), { recursive: true });
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      tools: TOOLS,
      agents,
    }),
    join(dir, 'snotra.config.json'),
    dir,
  );
  const scripts: Record<string, ScriptedStep[]> = {};
  for (const id of Object.keys(agents)) scripts[id] = SCRIPTS[id] ?? SCRIPTS.parker ?? [];
  return {
    dir,
    loaded,
    // A fresh model per runtime: ScriptedModel remembers every run it answered.
    start: () =>
      Runtime.start({
        loaded,
        model: new TimedModel(new ScriptedModel(scripts)),
        executorOverrides: EXECUTORS,
        logDestination: discard(),
      }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function timeStart(e: Env): Promise<{ rt: Runtime; ms: number }> {
  const t0 = performance.now();
  const rt = await e.start();
  return { rt, ms: performance.now() - t0 };
}

/** How busy an idle runtime keeps the event loop (the approval sync runs every second). */
async function idleLoad(windowMs = 3200) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const elu0 = performance.eventLoopUtilization();
  await sleep(windowMs);
  const elu = performance.eventLoopUtilization(elu0);
  delay.disable();
  return {
    windowMs,
    eventLoopUtilization: Math.round(elu.utilization * 1000) / 1000,
    maxDelayMs: ms(delay.max / 1e6),
  };
}

// ---------------------------------------------------------------------------------------------
// Part 1: tool-call overhead

async function part1() {
  const e = env({
    final: { mode: 'allow', budget: BUDGET },
    noop: { mode: 'allow', budget: BUDGET },
    readfile: { mode: 'allow', budget: BUDGET },
  });
  const rt = await e.start();
  const variants = ['final', 'noop', 'readfile'] as const;
  const total: Record<string, number[]> = { final: [], noop: [], readfile: [] };
  const inRun: Record<string, number[]> = { noop: [], readfile: [] };
  const beforeExec: Record<string, number[]> = { noop: [], readfile: [] };
  const afterExec: Record<string, number[]> = { noop: [], readfile: [] };
  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const v of variants) {
        const t0 = performance.now();
        const { runId, outcome } = await rt.chat(v, 'go');
        const t1 = performance.now();
        if (outcome.status !== 'completed')
          throw new Error(`part 1: ${v} run ${outcome.status}: ${outcome.reason}`);
        const m = marks.get(runId);
        marks.delete(runId);
        if (i < WARMUP) continue;
        total[v]?.push(t1 - t0);
        if (v === 'final') continue;
        const [s0, s1] = m?.step ?? [];
        const x = m?.exec[0];
        if (s0 === undefined || s1 === undefined || x === undefined || m?.exec.length !== 1)
          throw new Error(`part 1: ${v} run without one call between two steps`);
        inRun[v]?.push(s1 - s0);
        beforeExec[v]?.push(x - s0);
        afterExec[v]?.push(s1 - x);
      }
    }
  } finally {
    await rt.stop();
    e.cleanup();
  }
  const med = (v: string) => summarize(total[v] ?? []).median;
  const diff = med('noop') - med('final');
  const perCall = {
    noop: {
      inRun: stats(inRun.noop ?? []),
      proposedToExecutor: stats(beforeExec.noop ?? []),
      executorToNextStep: stats(afterExec.noop ?? []),
      differenceOfMedians: ms(diff),
    },
    readFile: {
      inRun: stats(inRun.readfile ?? []),
      proposedToExecutor: stats(beforeExec.readfile ?? []),
      executorToNextStep: stats(afterExec.readfile ?? []),
      differenceOfMedians: ms(med('readfile') - med('final')),
    },
  };
  const noop = summarize(inRun.noop ?? []);
  return {
    runs: {
      finalOnly: stats(total.final ?? []),
      noopCall: stats(total.noop ?? []),
      readFileCall: stats(total.readfile ?? []),
    },
    perCall,
    goal: {
      target: 'tool-call overhead p50 < 1 ms and p99 < 5 ms (bench.noop)',
      p50InRun: ms(noop.median),
      p50DifferenceOfMedians: ms(diff),
      p99InRun: ms(noop.p99),
      p50Met: noop.median < 1 && diff < 1,
      p99Met: noop.p99 < 5,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Part 2: park + resume

async function part2() {
  const e = env({ parker: { mode: 'ask', budget: BUDGET } });
  const rt = await e.start();
  const opened = new Map<string, ApprovalRecord>();
  rt.onApproval((a) => {
    if (a.runId !== null) opened.set(a.runId, a);
  });
  const toPark: number[] = [];
  const toDone: number[] = [];
  const warm = Math.min(10, WARMUP);
  let capProbe: Awaited<ReturnType<typeof probeCap>> | null = null;
  try {
    for (let i = 0; i < warm + PARK_RUNS; i++) {
      const t0 = performance.now();
      const runId = await rt.runs.runTask('parker', `task-${i}`, 'tell #ops the nightly run is done');
      let approval: ApprovalRecord | undefined;
      for (let spins = 0; ; spins++) {
        approval = opened.get(runId);
        if (approval !== undefined && !runtimeInternals(rt).runs.isLive(runId)) break;
        if (spins > 1_000_000) throw new Error(`part 2: run ${runId} did not park`);
        await tick();
      }
      const t1 = performance.now();
      opened.delete(runId);
      const pending = runtimeInternals(rt).store.approvals.listPending({ taskId: `task-${i}` });
      if (pending.length !== 1 || pending[0]?.id !== approval.id)
        throw new Error(`part 2: run ${runId} parked without its pending approval`);
      const done = rt.waitForRun(runId);
      const t2 = performance.now();
      const decided = rt.decide(approval.id, 'approved', 'bench');
      if (!decided.ok) throw new Error(`part 2: decide failed: ${decided.reason}`);
      const outcome = await done;
      const t3 = performance.now();
      marks.delete(runId);
      if (outcome.status !== 'completed') throw new Error(`part 2: run ${outcome.status}: ${outcome.reason}`);
      if (i < warm) continue;
      toPark.push(t1 - t0);
      toDone.push(t3 - t2);
    }
    capProbe = await probeCap(rt, opened);
  } finally {
    await rt.stop();
    e.cleanup();
  }
  return { runTaskToParked: stats(toPark), decideToCompleted: stats(toDone), capProbe };
}

/**
 * Parks PER_AGENT runs of one agent without deciding them, then sends one more: parked runs keep
 * their slot in the agent actor until they end, so the extra message is refused (nak, redelivered).
 */
async function probeCap(rt: Runtime, opened: Map<string, ApprovalRecord>) {
  const before = refusals;
  const ids = await Promise.all(
    Array.from({ length: PER_AGENT }, (_, k) => rt.runs.runTask('parker', `cap-${k}`, 'go')),
  );
  const deadline = performance.now() + 30_000;
  while (ids.some((id) => !opened.has(id) || runtimeInternals(rt).runs.isLive(id))) {
    if (performance.now() > deadline) throw new Error('part 2: cap probe runs did not park');
    await sleep(5);
  }
  const extra = await rt.runs.runTask('parker', 'cap-extra', 'go');
  await sleep(2500);
  return {
    parkedRunsOfAgent: PER_AGENT,
    extraRunStarted: runtimeInternals(rt).store.snapshots.get(extra) !== null,
    refusalsIn2500ms: refusals - before,
  };
}

// ---------------------------------------------------------------------------------------------
// Part 3 + 4a: boot with N parked runs

async function part3() {
  const agents: Record<string, Record<string, unknown>> = {};
  for (let a = 0; a < PARK_AGENTS; a++) agents[`p${a}`] = { mode: 'ask', budget: BUDGET };
  const e = env(agents);

  // Baseline: boot with no runs, and its heap.
  const emptyBoots: number[] = [];
  let emptyMem = { heap: 0, rss: 0 };
  let emptyIdle: Awaited<ReturnType<typeof idleLoad>> | null = null;
  for (let b = 0; b < BOOTS; b++) {
    const { rt, ms: t } = await timeStart(e);
    emptyBoots.push(t);
    if (b === BOOTS - 1) {
      emptyMem = await memory();
      emptyIdle = await idleLoad();
    }
    await rt.stop();
  }

  // Create parked runs: all agents at once, 16 runs each, then restart (which frees the slots).
  const bootCurve: Array<{ parked: number; bootMs: number }> = [];
  let parked = 0;
  let cycles = 0;
  const refusedBefore = refusals;
  const createStart = performance.now();
  let rt = await e.start();
  let sampleRunId: string | null = null;
  try {
    while (parked < PARKED && (cycles === 0 || performance.now() - createStart < CREATE_BUDGET_MS)) {
      const want = Math.min(PARK_AGENTS * PER_AGENT, PARKED - parked);
      const opened = new Set<string>();
      const off = rt.onApproval((a) => {
        if (a.runId !== null) opened.add(a.runId);
      });
      const ids = await Promise.all(
        Array.from({ length: want }, (_, k) =>
          rt.runs.runTask(`p${k % PARK_AGENTS}`, `t${parked + k}`, 'go'),
        ),
      );
      const deadline = performance.now() + 60_000;
      while (opened.size < want || runtimeInternals(rt).runs.liveRuns().length > 0) {
        if (performance.now() > deadline) throw new Error(`part 3: only ${opened.size}/${want} runs parked`);
        await sleep(2);
      }
      off();
      sampleRunId ??= ids[0] ?? null;
      parked += want;
      cycles++;
      await rt.stop();
      const b = await timeStart(e);
      rt = b.rt;
      bootCurve.push({ parked, bootMs: ms(b.ms) });
    }
    const createMs = performance.now() - createStart;
    const real = parked;

    // Clone the rest (if the budget ran out) from a real parked run, through the store.
    let cloned = 0;
    if (parked < PARKED && sampleRunId !== null) {
      const srcId = sampleRunId;
      const src = runtimeInternals(rt).store.snapshots.get(srcId);
      const ctx = (src?.snapshot as { context?: { approvalId?: string } } | undefined)?.context;
      const approval = ctx?.approvalId ? runtimeInternals(rt).store.approvals.get(ctx.approvalId) : null;
      if (src === null || approval === null) throw new Error('part 3: no parked run to clone');
      const text = JSON.stringify(src.snapshot);
      const { id: _id, v: _v, status: _s, decidedAt: _da, decidedBy: _db, ...rest } = approval;
      const store = runtimeInternals(rt).store;
      while (parked < PARKED) {
        const n = Math.min(1000, PARKED - parked);
        store.transaction(
          () => {
            for (let k = 0; k < n; k++) {
              const runId = `${src.agentId}:clone-${parked + k}`;
              const snapshot = JSON.parse(text.replaceAll(srcId, runId)) as Record<string, unknown>;
              store.snapshots.put({
                runId,
                agentId: src.agentId,
                surface: src.surface,
                status: src.status,
                parentRunId: src.parentRunId,
                snapshot,
              });
              store.approvals.create({
                ...rest,
                id: `apr:${runId}:c1`,
                callId: `${runId}:c1`,
                runId,
                idempotencyKey: `call:${runId}:c1`,
                resumeCheckpoint: { runId, callId: 'c1', cursor: 0 },
              });
            }
          },
          { durable: true },
        );
        parked += n;
        cloned += n;
      }
    }
    await rt.stop();

    // Timed boots with N parked.
    const boots: number[] = [];
    let parkedMem = { heap: 0, rss: 0 };
    let check: Record<string, unknown> = {};
    let parkedIdle: Awaited<ReturnType<typeof idleLoad>> | null = null;
    for (let b = 0; b < BOOTS; b++) {
      const r = await timeStart(e);
      rt = r.rt;
      boots.push(r.ms);
      if (b === BOOTS - 1) {
        parkedMem = await memory();
        parkedIdle = await idleLoad();
        check = await breakdown(rt, parked, sampleRunId);
      }
      await rt.stop();
    }
    return {
      parked: { total: parked, createdByRunTask: real, clonedThroughStore: cloned },
      creation: {
        ms: ms(createMs),
        runsPerSecond: Math.round(real / (createMs / 1000)),
        restarts: cycles,
        refusalsLogged: refusals - refusedBefore,
      },
      bootEmpty: stats(emptyBoots),
      bootWithParked: stats(boots),
      bootCurve: bootCurve.filter(
        (_, i, all) => i % Math.max(1, Math.floor(all.length / 8)) === 0 || i === all.length - 1,
      ),
      afterBoot: check,
      idle: { empty: emptyIdle, withParked: parkedIdle },
      goal: {
        target: 'boot with 10,000 parked runs < 2 s',
        met: parked >= 10_000 && summarize(boots).median < 2000,
      },
      memory: {
        heapEmptyMiB: ms(emptyMem.heap / 2 ** 20),
        heapParkedMiB: ms(parkedMem.heap / 2 ** 20),
        heapBytesPerParkedRun: Math.round((parkedMem.heap - emptyMem.heap) / parked),
        rssBytesPerParkedRun: Math.round((parkedMem.rss - emptyMem.rss) / parked),
      },
    };
  } finally {
    await rt.stop();
    e.cleanup();
  }
}

/** Where boot time goes with N parked runs, measured on the booted runtime; and one resume. */
async function breakdown(rt: Runtime, n: number, sampleRunId: string | null) {
  let t0 = performance.now();
  const list = runtimeInternals(rt).store.snapshots.list();
  const listMs = performance.now() - t0;
  t0 = performance.now();
  for (const r of list)
    if (r.status === 'waiting_for_approval') runtimeInternals(rt).store.snapshots.get(r.runId);
  const getAllMs = performance.now() - t0;
  t0 = performance.now();
  const pending = runtimeInternals(rt).store.approvals.listPending();
  const listPendingMs = performance.now() - t0;
  t0 = performance.now();
  runtimeInternals(rt).approvals.syncAll();
  const syncAllMs = performance.now() - t0;
  // Resume one real parked run and, when there are clones, one clone (they must behave the same).
  const resume = async (runId: string | undefined): Promise<number | null> => {
    const a = pending.find((p) => p.runId === runId);
    if (runId === undefined || a === undefined) return null;
    const done = rt.waitForRun(runId);
    const t = performance.now();
    rt.decide(a.id, 'approved', 'bench');
    const outcome = await done;
    if (outcome.status !== 'completed') throw new Error(`part 3: resume of ${runId}: ${outcome.status}`);
    return performance.now() - t;
  };
  const realMs = await resume(sampleRunId ?? undefined);
  const cloneMs = await resume(
    pending.find((p) => p.runId?.includes(':clone-') === true)?.runId ?? undefined,
  );
  return {
    liveRuns: runtimeInternals(rt).runs.liveRuns().length,
    pendingApprovals: pending.length,
    restoredAllParked: pending.length === n && runtimeInternals(rt).runs.liveRuns().length === 0,
    snapshotsListMs: ms(listMs),
    snapshotsGetAllParkedMs: ms(getAllMs),
    approvalsListPendingMs: ms(listPendingMs),
    approvalsSyncAllMs: ms(syncAllMs),
    decideToCompletedRealMs: realMs === null ? null : ms(realMs),
    decideToCompletedCloneMs: cloneMs === null ? null : ms(cloneMs),
  };
}

// ---------------------------------------------------------------------------------------------
// Part 4b: memory per live agent

function rssKiB(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** The embedded server's pid (a private field of Runtime; read here only to sample its RSS). */
const natsPid = (rt: Runtime): number | null =>
  (rt as unknown as { nats: { pid: number } | null }).nats?.pid ?? null;

async function part4() {
  const measure = async (m: number) => {
    const agents: Record<string, Record<string, unknown>> = {};
    for (let a = 0; a < m; a++) agents[`a${a}`] = { mode: 'ask', budget: BUDGET };
    const e = env(agents);
    try {
      const { rt, ms: bootMs } = await timeStart(e);
      await sleep(200); // Let every consumer finish its set-up.
      const { heap } = await memory();
      const pid = natsPid(rt);
      const natsRss = pid === null ? null : rssKiB(pid);
      await rt.stop();
      return { heap, bootMs, natsRss };
    } finally {
      e.cleanup();
    }
  };
  await measure(1); // warm-up
  const one = await measure(1);
  const many = await measure(AGENTS);
  const d = (x: number | null, y: number | null) => (x === null || y === null ? null : x - y);
  const natsDelta = d(many.natsRss, one.natsRss);
  return {
    agents: AGENTS,
    bootOneAgentMs: ms(one.bootMs),
    bootManyAgentsMs: ms(many.bootMs),
    heapBytesPerAgent: Math.round((many.heap - one.heap) / (AGENTS - 1)),
    natsServerRssKiBPerAgent: natsDelta === null ? null : Math.round(natsDelta / (AGENTS - 1)),
  };
}

// ---------------------------------------------------------------------------------------------
// Part 5: allowed-call rate, one run at a time and 64 in flight

async function part5() {
  const budget = {
    modelCalls: CALL_STEPS + 1,
    toolCalls: CALL_STEPS * CALLS_PER_STEP,
    wallTimeMs: 24 * 60 * 60_000,
  };
  const agents = Object.fromEntries(
    Array.from({ length: CALL_AGENTS }, (_, a) => [`flood${a}`, { mode: 'allow', budget }]),
  );
  const e = env(agents);
  const rt = await e.start();
  const perRun = CALL_STEPS * CALLS_PER_STEP;
  const variant = async (inFlight: number) => {
    const gaps: number[] = [];
    let calls = 0;
    let next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const worker = async (w: number): Promise<void> => {
      while (next < CALL_RUNS) {
        next++;
        const { runId, outcome } = await rt.chat(`flood${w % CALL_AGENTS}`, 'go');
        if (outcome.status !== 'completed')
          throw new Error(`part 5: run ${outcome.status}: ${outcome.reason}`);
        const exec = marks.get(runId)?.exec ?? [];
        marks.delete(runId);
        if (exec.length !== perRun) throw new Error(`part 5: ${exec.length} of ${perRun} calls ran`);
        calls += exec.length;
        // Within a step: executor to executor is one whole allowed call.
        for (let i = 1; i < exec.length; i++)
          if (i % CALLS_PER_STEP !== 0) gaps.push((exec[i] as number) - (exec[i - 1] as number));
      }
    };
    await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)));
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      inFlight,
      runs: CALL_RUNS,
      calls,
      callsPerSecond: Math.round((calls * 1000) / wall),
      cpuMsPerCall: ms((cpu.user + cpu.system) / 1000 / calls),
      perCall: stats(gaps),
    };
  };
  try {
    await variant(4); // warm-up
    const one = await variant(1);
    const many = await variant(CALL_AGENTS * 16);
    return {
      oneAtATime: one,
      inFlight64: many,
      goal: {
        target: 'allowed call p50 < 0.5 ms; >= 10,000 allowed no-op calls/s with 64 runs in flight',
        p50Met: one.perCall.p50 < 0.5,
        rateMet: many.callsPerSecond >= 10_000,
      },
    };
  } finally {
    await rt.stop();
    e.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------

const results: Record<string, unknown> = {};
const timings: Record<string, number> = {};
for (const [name, part] of [
  ['toolCall', part1],
  ['parkResume', part2],
  ['boot', part3],
  ['agents', part4],
  ['callRate', part5],
] as const) {
  if (!PARTS.includes(name)) continue;
  const t0 = performance.now();
  results[name] = await part();
  timings[name] = ms((performance.now() - t0) / 1000);
}

console.log(
  JSON.stringify(
    {
      bench: 'runtime',
      unit: 'ms',
      machine: {
        cpu: cpus()[0]?.model ?? 'unknown',
        cpus: cpus().length,
        os: `${platform()} ${release()}`,
        node: process.version,
        loadAverageStart: load0.map((x) => Math.round(x * 100) / 100),
        loadAverageEnd: loadavg().map((x) => Math.round(x * 100) / 100),
        gc: gcExposed ? '--expose-gc' : 'v8.setFlagsFromString',
      },
      config: { RUNS, WARMUP, PARK_RUNS, PARKED, CREATE_BUDGET_MS, AGENTS },
      ...results,
      partSeconds: timings,
      totalSeconds: ms((performance.now() - started) / 1000),
    },
    null,
    2,
  ),
);
