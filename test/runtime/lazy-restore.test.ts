import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { ActorNode } from '../../runtime/inspect/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import { RESUME_CONCURRENCY } from '../../runtime/runs/boot-resume.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

// Boot leaves a run parked on a pending approval unloaded (no live actor, snapshot not read) and
// brings it back only when its decision, expiry or a cancel arrives.

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

const notify = (text: string): ScriptedStep[] => [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'notified' } },
];

const config = {
  agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 600_000 } } },
};

/** Starts `n` unattended tasks and waits until every one is parked (pending approval, no live actor). */
async function parkRuns(runtime: Runtime, n: number): Promise<Map<string, string>> {
  const runIds: string[] = [];
  for (let i = 0; i < n; i++) runIds.push(await runtime.runs.runTask('worker', `task-${i}`, 'go'));
  await eventually(
    () =>
      runtimeInternals(runtime).store.approvals.listPending().length === n &&
      runIds.every((id) => !runtimeInternals(runtime).runs.isLive(id)),
    60_000,
    `${n} parked runs`,
  );
  const byRun = new Map<string, string>();
  for (const a of runtimeInternals(runtime).store.approvals.listPending()) byRun.set(a.runId as string, a.id);
  return byRun;
}

function flatten(nodes: readonly ActorNode[]): ActorNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children)]);
}

const CONTROL = new URL('../../runtime/control/', import.meta.url).pathname;

/**
 * Approves in another process as `snotra inbox approve` does: its own connection to the state
 * file, the single-use decision, then a notification on the runtime's control socket. (The CLI
 * binary itself refuses to decide from a process descending from the runtime, which every child
 * of this test process is; that guard is tested with the CLI.) Several ids are decided in turn.
 */
async function approveFromOtherProcess(stateDir: string, ...ids: string[]) {
  const code = `
    const { openLocalStore } = await import(${JSON.stringify(`${CONTROL}local-store.ts`)});
    const { notifyRuntime } = await import(${JSON.stringify(`${CONTROL}socket.ts`)});
    const stateDir = process.env.DECIDE_STATE_DIR;
    const ids = JSON.parse(process.env.DECIDE_IDS);
    const out = [];
    for (const id of ids) {
      const store = openLocalStore(stateDir, false);
      let result;
      try { result = store.approvals.decide(id, 'approved', 'local:test', undefined); } finally { store.close(); }
      const notified = result.ok ? await notifyRuntime(stateDir, { v: 1, type: 'approval_decided', id }) : false;
      out.push({ ok: result.ok, reason: result.ok ? null : result.reason, notified });
    }
    console.log(JSON.stringify(out));
  `;
  // Asynchronous: the runtime in this process must answer the notification meanwhile.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', code],
    {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, DECIDE_STATE_DIR: stateDir, DECIDE_IDS: JSON.stringify(ids) },
    },
  );
  return JSON.parse(stdout.trim().split('\n').pop() as string) as Array<{
    ok: boolean;
    reason: string | null;
    notified: boolean;
  }>;
}

/** The fixture's `send_message` taking 20 ms of simulated work, counting how many run at once. */
function countingSend(f: RuntimeFixture): { executor: ToolExecutor; most: () => number } {
  const send = f.executors.send_message as ToolExecutor;
  let going = 0;
  let most = 0;
  return {
    most: () => most,
    executor: {
      async execute(args, ctx) {
        most = Math.max(most, ++going);
        try {
          await new Promise((r) => setTimeout(r, 20));
          return await send.execute(args, ctx);
        } finally {
          going--;
        }
      },
    },
  };
}

describe('lazy restore of parked runs at boot', () => {
  it('a parked run left unloaded at boot is listed, approved once from another process, and resumes once', async () => {
    fx = runtimeFixture(config);
    // One script per run, in the order the runs start; each sends its own line once.
    const model = new ScriptedModel({ worker: notify('first') });
    rt = await fx.start(model);
    const parked = await parkRuns(rt, 1);
    const [runId, approvalId] = [...parked][0] as [string, string];
    await rt.stop();

    rt = await fx.start(model);
    // Unloaded: no live actor, yet still listed as parked, in the Inbox and in the actor tree.
    expect(runtimeInternals(rt).runs.liveRuns()).toEqual([]);
    expect(
      runtimeInternals(rt)
        .store.snapshots.list({ status: 'waiting_for_approval' })
        .map((r) => r.runId),
    ).toEqual([runId]);
    expect(
      runtimeInternals(rt)
        .store.approvals.listPending()
        .map((a) => a.id),
    ).toEqual([approvalId]);
    expect(flatten(rt.node.inspect.actors().actors).find((a) => a.id === runId)).toMatchObject({
      kind: 'run',
      parked: true,
    });
    expect(fx.sent()).toEqual([]);

    const approve = await approveFromOtherProcess(fx.stateDir, approvalId);
    expect(approve).toEqual([{ ok: true, reason: null, notified: true }]);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'notified' });
    expect(fx.sent()).toEqual(['#ops first']);

    // A second decision from another process changes nothing; a restart repeats nothing.
    const again = await approveFromOtherProcess(fx.stateDir, approvalId);
    expect(again).toEqual([{ ok: false, reason: 'already_decided', notified: false }]);
    await rt.stop();
    rt = await fx.start(model);
    expect(runtimeInternals(rt).runs.liveRuns()).toEqual([]);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    expect(fx.sent()).toEqual(['#ops first']);
    const kinds = runtimeInternals(rt)
      .store.audit.list({ runId })
      .filter((e) => e.callId !== null)
      .map((e) => e.kind);
    expect(kinds.filter((k) => k === 'started')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'approval_resolved')).toHaveLength(1);
  });

  it('a run parked on an approval that expires while it is unloaded ends denied, never executed', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: notify('late') });
    const clock = new SimulatedClock();
    rt = await fx.start(model, { approvalTtlMs: 60_000, clock });
    const parked = await parkRuns(rt, 1);
    const [runId, approvalId] = [...parked][0] as [string, string];
    await rt.stop();

    // 59 s pass while no runtime runs: the stored deadline falls due a second after the next boot.
    clock.advance(59_000);
    rt = await fx.start(model, { clock });
    expect(runtimeInternals(rt).store.approvals.get(approvalId)?.status).toBe('pending');
    expect(runtimeInternals(rt).runs.isLive(runId)).toBe(false);
    clock.advance(2_000);
    expect(await rt.waitForRun(runId)).toEqual({ status: 'denied', reason: 'approval_expired' });
    expect(runtimeInternals(rt).store.approvals.get(approvalId)?.status).toBe('expired');
    expect(fx.sent()).toEqual([]);
  });

  it('approvals found at boot stay dormant: one decided is reported resolved and resumes once, the others expire at their own deadlines', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: notify('kept') });
    // One run parked with a far deadline, then two with a near one (distinct deadlines).
    const clock = new SimulatedClock();
    rt = await fx.start(model, { approvalTtlMs: 24 * 60 * 60_000, clock });
    const [[keptRun, keptApproval]] = [...(await parkRuns(rt, 1))] as [[string, string]];
    const far = runtimeInternals(rt).store.approvals.get(keptApproval)?.expiresAt ?? 0;
    await rt.stop();
    rt = await fx.start(model, { approvalTtlMs: 60_000, clock });
    const runtime0 = rt;
    for (let i = 0; i < 2; i++) {
      await runtime0.runs.runTask('worker', `late-${i}`, 'go');
      await eventually(
        () => runtimeInternals(runtime0).store.approvals.listPending().length === 2 + i,
        60_000,
        `late-${i}`,
      );
      clock.advance(1_000); // the two near deadlines a second apart
    }
    await eventually(
      () =>
        runtimeInternals(runtime0).store.approvals.listPending().length === 3 &&
        runtimeInternals(runtime0).runs.liveRuns().length === 0,
      60_000,
      'three parked runs',
    );
    const late = runtimeInternals(runtime0)
      .store.approvals.listPending()
      .filter((a) => a.id !== keptApproval);
    expect(late.every((a) => a.expiresAt < far)).toBe(true);
    await rt.stop();

    // 57 s pass while no runtime runs: the two near deadlines fall due a second and two after
    // the next boot, the far one a day later. Nothing is loaded at boot.
    clock.advance(57_000);
    const events: Array<{ type: string; runId: string; decision?: string }> = [];
    rt = await fx.start(model, { clock, onRunEvent: (e) => events.push(e as never) });
    const runtime = rt;
    expect(runtimeInternals(runtime).runs.liveRuns()).toEqual([]);
    const decided = runtime.decide(keptApproval, 'approved', 'alice');
    expect(decided.ok).toBe(true);
    expect(await runtime.waitForRun(keptRun)).toMatchObject({ status: 'completed', text: 'notified' });
    expect(events.filter((e) => e.type === 'approval.resolved' && e.runId === keptRun)).toMatchObject([
      { decision: 'approved' },
    ]);
    clock.advance(3_000);
    for (const a of late) {
      expect(await runtime.waitForRun(a.runId as string)).toEqual({
        status: 'denied',
        reason: 'approval_expired',
      });
      expect(runtimeInternals(runtime).store.approvals.get(a.id)?.status).toBe('expired');
      expect(events.filter((e) => e.type === 'approval.resolved' && e.runId === a.runId)).toMatchObject([
        { decision: 'expired' },
      ]);
    }
    expect(fx.sent()).toEqual(['#ops kept']);
    expect(runtime.decide(keptApproval, 'approved', 'alice').ok).toBe(false);
  });

  it(`runs decided while the runtime was down all resume once at the next boot, ${RESUME_CONCURRENCY} at a time`, async () => {
    fx = runtimeFixture(config);
    const n = RESUME_CONCURRENCY + 8;
    const model = new ScriptedModel({ worker: notify('batch') });
    rt = await fx.start(model);
    const parked = await parkRuns(rt, n);
    await rt.stop();
    rt = null;

    // Decided by another process while no runtime runs (the CLI path writes to the store).
    const decided = await approveFromOtherProcess(fx.stateDir, ...parked.values());
    expect(decided).toEqual([...parked.values()].map(() => ({ ok: true, reason: null, notified: false })));

    const counted = countingSend(fx);
    rt = await fx.start(model, { executorOverrides: { send_message: counted.executor } });
    const runtime = rt;
    const outcomes = await Promise.all([...parked.keys()].map((id) => runtime.waitForRun(id)));
    expect(outcomes.every((o) => o.status === 'completed')).toBe(true);
    expect(fx.sent()).toEqual(Array.from({ length: n }, () => '#ops batch'));
    expect(counted.most()).toBeGreaterThan(1);
    expect(counted.most()).toBeLessThanOrEqual(RESUME_CONCURRENCY);
    for (const runId of parked.keys()) {
      const started = runtimeInternals(runtime)
        .store.audit.list({ runId })
        .filter((e) => e.callId !== null && e.kind === 'started');
      expect(started, runId).toHaveLength(1);
    }
  });

  it(`a burst of decisions for parked runs brings them back ${RESUME_CONCURRENCY} at a time, each once`, async () => {
    fx = runtimeFixture(config);
    const n = RESUME_CONCURRENCY + 8;
    const model = new ScriptedModel({ worker: notify('burst') });
    const counted = countingSend(fx);
    rt = await fx.start(model, { executorOverrides: { send_message: counted.executor } });
    const parked = await parkRuns(rt, n);
    const runtime = rt;
    const done = [...parked.keys()].map((id) => runtime.waitForRun(id));
    for (const approvalId of parked.values())
      expect(runtime.decide(approvalId, 'approved', 'alice').ok).toBe(true);
    expect((await Promise.all(done)).every((o) => o.status === 'completed')).toBe(true);
    expect(fx.sent()).toEqual(Array.from({ length: n }, () => '#ops burst'));
    expect(counted.most()).toBeGreaterThan(1);
    expect(counted.most()).toBeLessThanOrEqual(RESUME_CONCURRENCY);
  });
});
