/**
 * The fresh processes of `bench/boot.bench.ts`, on a state dir whose runs were parked by
 * `bench/peers/ours.ts park` (same config: agent `p0` in `ask` mode, external-risk `bench.notify`,
 * a scripted model, a no-op executor counting the approved calls in B):
 *
 *   open DIR             Runtime.start on DIR, then stop: the start time and its CPU
 *   decide DIR           approve every pending approval through another store connection (as
 *                        `snotra inbox approve` does while no runtime runs); untimed set-up
 *   decided DIR N        a fresh runtime resumes the N runs decided before it started (at boot)
 *   burst DIR N          a fresh runtime; then N decisions at once (an Inbox "approve all"); it
 *                        resumes them as they come
 *
 * Prints one JSON line. Both resume modes end once every run completed (`run.completed`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { runtimeInternals } from '../runtime/testing.ts';

const T0 = performance.now();
const [, , mode, dir = '', nArg] = process.argv;
const counters = { A: 0, B: 0 };

async function open(d: string) {
  const [{ ScriptedModel }, { parseConfig }, { Runtime }] = await Promise.all([
    import('../actors/model/scripted.ts'),
    import('../runtime/config/load.ts'),
    import('../runtime/runtime.ts'),
  ]);
  const tImported = performance.now();
  mkdirSync(join(d, 'project'), { recursive: true });
  const budget = { modelCalls: 5, toolCalls: 5, wallTimeMs: 24 * 60 * 60_000 };
  const loaded = parseConfig(
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      tools: { 'bench.notify': { source: 'extension', risk: 'external', approvalDefault: 'allow' } },
      agents: { p0: { mode: 'ask', budget } },
    }),
    join(d, 'snotra.config.json'),
    d,
  );
  const script = [
    { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'bench.notify', args: { channel: '#ops' } }] } },
    { respond: { kind: 'final', text: 'done' } },
  ] as const;
  const scripted = new ScriptedModel({ p0: script });
  let completed = 0;
  let allDone: () => void = () => {};
  const done = new Promise<void>((r) => (allDone = r));
  let expected = Infinity;
  const cpu0 = process.cpuUsage();
  const tStart = performance.now();
  const rt = await Runtime.start({
    loaded,
    model: {
      step(request) {
        if (request.step === 0) counters.A++;
        return scripted.step(request);
      },
    },
    executorOverrides: {
      'bench.notify': {
        async execute() {
          counters.B++;
          return { ok: true };
        },
      },
    },
    logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
    onRunEvent: (e) => {
      if (e.type === 'run.completed' && ++completed >= expected) allDone();
    },
  });
  const startMs = performance.now() - tStart;
  const startCpu = process.cpuUsage(cpu0);
  const expect = (n: number): Promise<void> => {
    expected = n;
    if (completed >= n) allDone();
    return done;
  };
  return { rt, tImported, startMs, startCpuMs: (startCpu.user + startCpu.system) / 1000, expect };
}

const out: Record<string, unknown> = {};
if (mode === 'open') {
  const o = await open(dir);
  await o.rt.stop();
  Object.assign(out, { import_ms: o.tImported - T0, start_ms: o.startMs, start_cpu_ms: o.startCpuMs });
} else if (mode === 'decide') {
  const [{ openStore, Redactor }] = await Promise.all([import('../store/index.ts')]);
  const store = openStore({ path: join(dir, 'state', 'snotra.db'), redactor: new Redactor() });
  let decided = 0;
  try {
    for (const a of store.approvals.listPending())
      if (store.approvals.decide(a.id, 'approved', 'bench').ok) decided++;
  } finally {
    store.close();
  }
  out.decided = decided;
} else if (mode === 'decided' || mode === 'burst') {
  const n = Number(nArg);
  const o = await open(dir);
  const t = performance.now();
  if (mode === 'burst') {
    const pending = runtimeInternals(o.rt).store.approvals.listPending();
    if (pending.length !== n) throw new Error(`expected ${n} pending approvals, found ${pending.length}`);
    for (const a of pending) {
      const r = o.rt.decide(a.id, 'approved', 'bench');
      if (!r.ok) throw new Error(`decide ${a.id}: ${r.reason}`);
    }
  }
  await o.expect(n);
  const resumeMs = performance.now() - t;
  await o.rt.stop();
  Object.assign(out, { import_ms: o.tImported - T0, start_ms: o.startMs, resume_all_ms: resumeMs });
} else {
  throw new Error(`bench/boot-child.ts: unknown mode ${JSON.stringify(mode)} (open, decide, decided, burst)`);
}
out.counters = counters;
out.first_line_to_done_ms = performance.now() - T0;
console.log(JSON.stringify(out));
