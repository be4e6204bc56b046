import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../runtime/runtime.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { GoalStartRefusedError, runGoal } from '../../surfaces/goal/run-goal.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { call, final, OfferedTools } from './support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

const goalConfig = (agent: Record<string, unknown>, goal: Record<string, unknown>) => ({
  agents: { worker: { mode: 'allow', ...agent } },
  surfaces: { goalLoops: [{ id: 'g', agent: 'worker', objective: 'make the tests pass', ...goal }] },
});

async function finished(r: Runtime, status?: string) {
  return eventually(
    () => {
      const g = runtimeInternals(r).store.goals.get('g');
      return (
        g !== null &&
        g.status !== 'active' &&
        g.status !== 'paused' &&
        (status === undefined || g.status === status) &&
        g
      );
    },
    20_000,
    `goal g to finish${status ? ` as ${status}` : ''}`,
  );
}

describe('goal loop', () => {
  it('completes on a claimed goal: goal_status, then goal_complete with evidence, and no further iteration', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 5 }));
    const model = new OfferedTools({
      worker: [
        call('c1', 'goal_status', {}),
        call(
          'c2',
          'goal_complete',
          { evidence: 'npm test: 12 passed' },
          {
            kind: 'tool.result',
            tool: 'goal_status',
            contains: 'make the tests pass',
          },
        ),
        final('done', { kind: 'tool.result', tool: 'goal_complete', contains: 'recorded' }),
      ],
    });
    rt = await fx.start(model);
    expect(rt.goals.control('g', 'start', 'test').result).toBe('ok');
    const g = await finished(rt);
    expect(g).toMatchObject({
      status: 'complete',
      stopReason: 'goal_complete',
      iteration: 1,
      evidence: 'npm test: 12 passed',
    });
    expect(g.used).toMatchObject({ modelCalls: 3, toolCalls: 2 });
    const its = runtimeInternals(rt).store.goals.iterations('g');
    expect(its.map((i) => [i.iteration, i.runId, i.status, i.claim])).toEqual([
      [1, 'worker:goal:g:1:1', 'ended', 'npm test: 12 passed'],
    ]);
    model.scripted.assertConsumed('worker', 'worker:goal:g:1:1');
    expect(model.offered.get('worker:goal:g:1:1')).toEqual(
      expect.arrayContaining(['goal_status', 'goal_complete']),
    );
    expect(runtimeInternals(rt).store.snapshots.get('worker:goal:g:1:1')?.surface).toBe('goal');
  });

  it('offers the goal tools to goal runs only: another run is denied them (tool_not_granted)', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'allow' }, other: { mode: 'allow' } },
      surfaces: { goalLoops: [{ id: 'g', agent: 'worker', objective: 'x' }] },
    });
    const model = new OfferedTools({
      worker: [],
      other: [
        call('c1', 'goal_complete', { evidence: 'I say so' }),
        final('ok', { kind: 'tool.denied', tool: 'goal_complete', reason: 'tool_not_granted' }),
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('other', 'nightly', 'claim a goal');
    const outcome = await rt.waitForRun(runId);
    expect(outcome.status).toBe('completed');
    expect(model.offered.get(runId)).not.toContain('goal_complete');
    expect(model.offered.get(runId)).not.toContain('goal_status');
    expect(model.offered.get(runId)).toContain('read_file');
    expect(runtimeInternals(rt).store.goals.get('g')).toBeNull();
    model.scripted.assertConsumed('other', runId);
  });

  it('stops at the model-call budget as budget_limited (not complete), the last run cut to what was left', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 10, budget: { modelCalls: 3 } }));
    const model = new OfferedTools({
      worker: [call('c1', 'list_dir', { path: '.' }), final('not yet', { kind: 'tool.result' })],
    });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    const g = await finished(rt);
    expect(g).toMatchObject({ status: 'budget_limited', stopReason: 'budget_model_calls', iteration: 2 });
    expect(g.used.modelCalls).toBe(3);
    const its = runtimeInternals(rt).store.goals.iterations('g');
    expect(its.map((i) => i.budget.modelCalls)).toEqual([3, 1]);
    expect(its.map((i) => i.outcome)).toEqual(['completed: final_answer', 'failed: budget_model_calls']);
  });

  it('stops at the tool-call budget as budget_limited, never running a call over it', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 10, budget: { toolCalls: 3 } }));
    const model = new OfferedTools({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [
              { id: 'c1', tool: 'list_dir', args: { path: '.' } },
              { id: 'c2', tool: 'list_dir', args: { path: '.' } },
            ],
          },
        },
        final('not yet'),
      ],
    });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    const g = await finished(rt);
    expect(g).toMatchObject({ status: 'budget_limited', stopReason: 'budget_tool_calls', iteration: 2 });
    expect(g.used.toolCalls).toBe(3);
    const executed = runtimeInternals(rt)
      .store.audit.list({})
      .filter((e) => e.kind === 'completed' && e.tool === 'list_dir');
    expect(executed).toHaveLength(3);
  });

  it('stops at the wall-time budget as budget_limited: the run is cut at what was left, no further iteration', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 10, budget: { wallTimeMs: 1500 } }));
    const offered = new OfferedTools({ worker: [final('not yet')] });
    // A slow model (5 s a step, on the runtime's clock): the goal's 1.5 s must cut the first
    // run, not wait for the step.
    const clock = new SimulatedClock();
    const model = {
      step: (request: Parameters<OfferedTools['step']>[0]) =>
        new Promise<Awaited<ReturnType<OfferedTools['step']>>>((resolve, reject) => {
          clock.setTimeout(() => offered.step(request).then(resolve, reject), 5_000);
        }),
    };
    rt = await fx.start(model, { clock });
    const runtime = rt;
    rt.goals.control('g', 'start', 'test');
    await eventually(
      () => runtimeInternals(runtime).runs.isLive('worker:goal:g:1:1'),
      10_000,
      'the first run',
    );
    clock.advance(1500);
    const g = await finished(rt);
    expect(g).toMatchObject({
      status: 'budget_limited',
      stopReason: 'budget_wall_time',
      iteration: 1,
      evidence: null,
    });
    expect(g.used.wallTimeMs).toBeGreaterThanOrEqual(1500);
    expect(g.used.wallTimeMs).toBeLessThan(5_000);
    const its = runtimeInternals(rt).store.goals.iterations('g');
    expect(its.map((i) => [i.runId, i.budget.wallTimeMs, i.outcome])).toEqual([
      ['worker:goal:g:1:1', 1500, 'failed: budget_wall_time'],
    ]);
    expect(await rt.waitForRun('worker:goal:g:1:1')).toMatchObject({
      status: 'failed',
      reason: 'budget_wall_time',
    });
  });

  it('stops at the iteration cap as budget_limited (max_iterations): one run per iteration, ids from the identity', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 3 }));
    const model = new OfferedTools({ worker: [final('still working')] });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    const g = await finished(rt);
    expect(g).toMatchObject({ status: 'budget_limited', stopReason: 'max_iterations', iteration: 3 });
    expect(
      runtimeInternals(rt)
        .store.goals.iterations('g')
        .map((i) => i.runId),
    ).toEqual(['worker:goal:g:1:1', 'worker:goal:g:1:2', 'worker:goal:g:1:3']);
    expect(
      runtimeInternals(rt)
        .store.snapshots.list()
        .filter((r) => r.surface === 'goal'),
    ).toHaveLength(3);
    // Started again: a new epoch, from zero; the old epoch's iterations stay in the journal.
    expect(rt.goals.control('g', 'start', 'test').result).toBe('ok');
    const again = await eventually(
      () => {
        const x = (rt && runtimeInternals(rt))?.store.goals.get('g');
        return x?.epoch === 2 && x.status === 'budget_limited' && x;
      },
      20_000,
      'the second epoch to finish',
    );
    expect(again.iteration).toBe(3);
    expect(
      runtimeInternals(rt)
        .store.goals.iterations('g')
        .map((i) => `${i.epoch}:${i.iteration}`),
    ).toEqual(['1:1', '1:2', '1:3', '2:1', '2:2', '2:3']);
  });

  it('an approval that waits parks the goal (active, parked, no next iteration); deciding it continues the goal', async () => {
    fx = runtimeFixture(goalConfig({ mode: 'ask' }, { maxIterations: 2 }));
    const model = new OfferedTools({
      worker: [
        call('c1', 'send_message', { channel: '#ops', text: 'progress' }),
        final('sent', { kind: 'tool.result', tool: 'send_message' }),
      ],
    });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    const first = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({})[0],
      20_000,
      'the first approval',
    );
    await eventually(
      () => (rt && runtimeInternals(rt))?.store.goals.get('g')?.parked === true,
      10_000,
      'the goal to show parked',
    );
    expect(runtimeInternals(rt).store.goals.get('g')).toMatchObject({
      status: 'active',
      parked: true,
      iteration: 1,
    });
    expect(fx.sent()).toEqual([]);
    // Parked is parked, across a restart too: nothing decides for the human, no second iteration starts.
    await rt.stop();
    rt = await fx.start(model);
    expect(runtimeInternals(rt).store.goals.get('g')).toMatchObject({
      status: 'active',
      parked: true,
      iteration: 1,
    });
    expect(runtimeInternals(rt).store.approvals.get(first.id)?.status).toBe('pending');
    expect(runtimeInternals(rt).store.approvals.listPending({})).toHaveLength(1);

    expect(rt.decide(first.id, 'approved', 'test').ok).toBe(true);
    const second = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({}).find((a) => a.id !== first.id),
      20_000,
      'the second iteration to park',
    );
    expect(second.runId).toBe('worker:goal:g:1:2');
    expect(fx.sent()).toEqual(['#ops progress']);
    expect(rt.decide(second.id, 'approved', 'test').ok).toBe(true);
    const g = await finished(rt);
    expect(g).toMatchObject({
      status: 'budget_limited',
      stopReason: 'max_iterations',
      iteration: 2,
      parked: false,
    });
    expect(fx.sent()).toEqual(['#ops progress', '#ops progress']);
  });

  it('cancelling a parked goal ends its run; approving the stale request afterwards runs nothing', async () => {
    fx = runtimeFixture(goalConfig({ mode: 'ask' }, { maxIterations: 3 }));
    const model = new OfferedTools({
      worker: [
        call('c1', 'send_message', { channel: '#ops', text: 'progress' }),
        final('sent', { kind: 'tool.result', tool: 'send_message' }),
      ],
    });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({})[0],
      20_000,
      'an approval',
    );
    await eventually(
      () => (rt && runtimeInternals(rt))?.store.goals.get('g')?.parked === true,
      10_000,
      'the goal to park',
    );
    expect(rt.goals.control('g', 'cancel', 'test').result).toBe('ok');
    const runId = 'worker:goal:g:1:1';
    const outcome = await rt.waitForRun(runId);
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.reason).toMatch(/^cancelled: /);
    expect(runtimeInternals(rt).store.goals.get('g')).toMatchObject({
      status: 'cancelled',
      stopReason: 'cancelled_by_human',
      parked: false,
    });
    // The request left the Inbox with its run, audited as withdrawn; a late decision is refused.
    expect(runtimeInternals(rt).store.approvals.listPending({})).toEqual([]);
    expect(runtimeInternals(rt).store.approvals.get(pending.id)?.status).toBe('expired');
    const resolved = runtimeInternals(rt)
      .store.audit.list({ runId })
      .filter(
        (e) =>
          e.kind === 'approval_resolved' &&
          (e.detail as { approvalId?: string } | null)?.approvalId === pending.id,
      );
    expect(resolved).toHaveLength(1);
    expect(JSON.stringify(resolved[0]?.detail)).toMatch(/"withdrawn":"its run ended failed \(cancelled: /);
    expect(rt.decide(pending.id, 'approved', 'late-human')).toMatchObject({ ok: false, reason: 'expired' });
    // The run has ended: nothing resumes it. Restart to let any delivery settle, then check.
    await rt.stop();
    rt = await fx.start(model);
    expect(runtimeInternals(rt).store.snapshots.get(runId)?.status).toBe('failed');
    expect(fx.sent()).toEqual([]);
    expect(runtimeInternals(rt).store.goals.iterations('g')).toHaveLength(1);
    expect(rt.goals.control('g', 'resume', 'test').result).toBe('not_running');
  });

  it('the surface entry runGoal starts a goal and resolves when it stops; a second start while active is refused', async () => {
    fx = runtimeFixture(goalConfig({}, { maxIterations: 2 }));
    const model = new OfferedTools({ worker: [final('working')] });
    rt = await fx.start(model);
    const seen: string[] = [];
    const off = rt.goals.onChange((g) => seen.push(`${g.status}:${g.iteration}`));
    const done = runGoal(rt, 'g', 'test');
    await expect(runGoal(rt, 'g', 'test')).rejects.toBeInstanceOf(GoalStartRefusedError);
    const g = await done;
    off();
    expect(g).toMatchObject({ status: 'budget_limited', stopReason: 'max_iterations', iteration: 2 });
    expect(seen).toContain('active:1');
    expect(seen[seen.length - 1]).toBe('budget_limited:2');
    await expect(runGoal(rt, 'nope', 'test')).rejects.toThrow(/unknown_goal/);
  });
});
