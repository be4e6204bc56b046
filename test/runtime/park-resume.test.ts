import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { toolCallMachine } from '../../machines/tool-call/machine.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { createActor } from 'xstate';
import type { Clock } from '../../runtime/time/clock.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

const NOTIFY: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'nightly done' } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'notified' } },
];

const config = {
  agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
};

/** Checks that each call's audit events are a legal path of the tool-call machine. */
function assertLifecycle(kinds: string[]): void {
  const actor = createActor(toolCallMachine).start();
  for (const k of kinds) {
    if (k === 'proposed') continue;
    const before = actor.getSnapshot().value;
    if (k === 'policy_decided') actor.send({ type: 'policy_decided', decision: 'approval-required' });
    else if (k === 'approval_resolved') actor.send({ type: 'approval_resolved', approved: true });
    else actor.send({ type: k as 'started' });
    expect(actor.getSnapshot().value, `${k} after ${String(before)}`).not.toBe(before);
  }
}

describe('unattended park and resume', () => {
  it('parks in the Inbox, survives a restart, resumes once after a decision, and never repeats the send', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: NOTIFY });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'nightly', 'tell #ops the nightly run is done');

    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
      10_000,
      'an Inbox record',
    );
    expect(pending).toMatchObject({
      runId,
      agentId: 'worker',
      tool: 'send_message',
      risk: 'external',
      reason: 'mode_ask',
      status: 'pending',
    });
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 5_000, 'the run to park');
    expect(runtimeInternals(rt).store.snapshots.get(runId)?.status).toBe('waiting_for_approval');
    expect(fx.sent()).toEqual([]);

    // Restart: the run stays parked, the approval stays pending, nothing has run.
    await rt.stop();
    rt = await fx.start(model);
    expect(runtimeInternals(rt).runs.isLive(runId)).toBe(false);
    expect(runtimeInternals(rt).store.approvals.get(pending.id)?.status).toBe('pending');
    expect(fx.sent()).toEqual([]);

    const decided = rt.decide(pending.id, 'approved', 'alice');
    expect(decided.ok).toBe(true);
    expect(await rt.waitForRun(runId)).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'notified',
    });
    expect(fx.sent()).toEqual(['#ops nightly done']);
    model.assertConsumed('worker', runId);

    // A second decision changes nothing and says why.
    const again = rt.decide(pending.id, 'denied', 'mallory');
    expect(again).toMatchObject({ ok: false, reason: 'already_decided' });

    // Another restart: the completed run is not restored and nothing is sent again.
    await rt.stop();
    rt = await fx.start(model);
    await new Promise((r) => setTimeout(r, 200));
    expect(fx.sent()).toEqual(['#ops nightly done']);

    const events = runtimeInternals(rt)
      .store.audit.list({ runId })
      .filter((e) => e.callId !== null);
    expect(events.map((e) => e.kind)).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'started',
      'completed',
    ]);
    assertLifecycle(events.map((e) => e.kind));
    expect(events.find((e) => e.kind === 'approval_resolved')).toMatchObject({ status: 'approved' });
    expect(runtimeInternals(rt).store.audit.verifyChain()).toMatchObject({ ok: true });
  });

  it('a decision that arrives while the runtime is down is applied at the next start, once', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: NOTIFY });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'nightly', 'go');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending()[0],
      10_000,
      'an Inbox record',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 5_000, 'the run to park');
    await rt.stop();
    rt = null;

    // Decided by another process while no runtime runs (the CLI path writes to the store).
    const { decideAsLocalUser } = await import('../../runtime/control/inbox.ts');
    const { result, notified } = await decideAsLocalUser(fx.stateDir, pending.id, 'approved');
    expect(result.ok).toBe(true);
    expect(notified).toBe(false);

    rt = await fx.start(model);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    expect(fx.sent()).toEqual(['#ops nightly done']);
  });

  it('parked runs hold no slot of their agent: more than 16 unattended tasks can all park', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: [NOTIFY[0]!] });
    rt = await fx.start(model);
    const runIds: string[] = [];
    for (let i = 0; i < 20; i++) runIds.push(await rt.runs.runTask('worker', `task-${i}`, 'go'));
    await eventually(
      () => runtimeInternals(rt!).store.approvals.listPending().length === 20,
      20_000,
      'twenty parked approvals',
    );
    expect(runtimeInternals(rt).store.approvals.pendingIds().size).toBe(20);
    await eventually(
      () => runIds.every((id) => !runtimeInternals(rt!).runs.isLive(id)),
      5_000,
      'every run parked',
    );
  });

  it('a denied approval ends the run denied and never executes the call', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: [NOTIFY[0]!] });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 'nightly', 'go');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending()[0],
      10_000,
      'an Inbox record',
    );
    rt.decide(pending.id, 'denied', 'alice');
    expect(await rt.waitForRun(runId)).toEqual({ status: 'denied', reason: 'approval_denied' });
    expect(fx.sent()).toEqual([]);
  });

  it('an approval that expires ends the run denied (expiry is data, re-armed at boot)', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: [NOTIFY[0]!] });
    const clock = new SimulatedClock();
    rt = await fx.start(model, { approvalTtlMs: 600, clock });
    const runId = await rt.runs.runTask('worker', 'nightly', 'go');
    await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending()[0],
      10_000,
      'an Inbox record',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 5_000, 'the run to park');
    await rt.stop();
    rt = await fx.start(model, { approvalTtlMs: 600, clock });
    // Past the deadline: only the timer the new process armed at boot can expire the approval.
    clock.advance(1_000);
    expect(await rt.waitForRun(runId)).toEqual({ status: 'denied', reason: 'approval_expired' });
    expect(fx.sent()).toEqual([]);
  });

  it('an approval deadline is honoured even when timers fire before the runtime’s clock reaches it', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: [NOTIFY[0]!] });
    // A clock whose time runs at half the speed of its timers: every timer armed on it fires
    // "early" by that clock's time.
    const timers = new SimulatedClock();
    const t0 = timers.now();
    const slow: Clock = {
      now: () => t0 + Math.floor((timers.now() - t0) / 2),
      setTimeout: (fn, ms) => timers.setTimeout(fn, ms),
      clearTimeout: (h) => timers.clearTimeout(h),
      setInterval: (fn, ms) => timers.setInterval(fn, ms),
      clearInterval: (h) => timers.clearInterval(h),
    };
    rt = await fx.start(model, { approvalTtlMs: 300, clock: slow });
    const runId = await rt.runs.runTask('worker', 'nightly', 'go');
    await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending()[0],
      10_000,
      'an Inbox record',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 5_000, 'the run to park');
    // The approval's time passes its deadline when its timers' time is twice as far.
    timers.advance(1_000);
    expect(await rt.waitForRun(runId)).toEqual({ status: 'denied', reason: 'approval_expired' });
    expect(fx.sent()).toEqual([]);
  });

  it('an attended chat asks inline and waits; the approval is answered through the in-process API', async () => {
    fx = runtimeFixture({ agents: { assistant: { mode: 'ask' } } });
    const model = new ScriptedModel({ assistant: NOTIFY });
    rt = await fx.start(model);
    const seen: string[] = [];
    rt.onApproval((a, interaction) => {
      seen.push(`${a.tool}:${interaction}`);
      setTimeout(() => rt?.decide(a.id, 'approved', 'alice'), 10);
    });
    const { runId, outcome } = await rt.chat('assistant', 'notify ops');
    expect(outcome).toMatchObject({ status: 'completed', text: 'notified' });
    expect(seen).toEqual(['send_message:attended']);
    expect(fx.sent()).toEqual(['#ops nightly done']);
    model.assertConsumed('assistant', runId);
  });
});
