import { afterEach, describe, expect, it } from 'vitest';
import type { ActorEvent, ActorNode, ActorTreeSnapshot } from '../../runtime/inspect/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { LocalTree } from '../../surfaces/cli/inspect/render.ts';
import { call, final, OfferedTools } from '../goal/support.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

const OBJECTIVE = 'ship the quarterly report to finance';
const EVIDENCE = 'report-7f3a uploaded and acknowledged';
const RUN = 'worker:goal:g:1:1';

function find(nodes: readonly ActorNode[], id: string): ActorNode | undefined {
  for (const n of nodes) {
    if (n.id === id) return n;
    const c = find(n.children, id);
    if (c !== undefined) return c;
  }
  return undefined;
}

/** How many nodes of the tree have this id (a run must appear once). */
function count(nodes: readonly ActorNode[], id: string): number {
  return nodes.reduce((n, x) => n + (x.id === id ? 1 : 0) + count(x.children, id), 0);
}

const shape = (nodes: readonly ActorNode[]): unknown =>
  nodes.map((n) => ({ id: n.id, kind: n.kind, parked: n.parked, children: shape(n.children) }));

/** The tree a client gets by applying the events one by one over a first tree. */
function applied(first: ActorTreeSnapshot, events: readonly ActorEvent[]): ActorTreeSnapshot {
  const local = new LocalTree();
  local.reset(first);
  for (const e of events) if (e.seq > first.seq) local.apply(e);
  return local.tree();
}

describe('goal loops in the live actor tree', () => {
  it('a goal is a node under its agent with its iteration runs under it: parks, resumes (across a restart), completes; never its objective or evidence', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask' }, other: { mode: 'ask' } },
      surfaces: {
        goalLoops: [
          {
            id: 'g',
            agent: 'worker',
            objective: OBJECTIVE,
            maxIterations: 4,
            budget: { modelCalls: 20, toolCalls: 9 },
          },
          { id: 'idle-goal', agent: 'other', objective: 'never started here', maxIterations: 2 },
        ],
      },
    });
    const model = new OfferedTools({
      worker: [
        call('c1', 'send_message', { channel: '#finance', text: 'report attached' }),
        call('c2', 'goal_complete', { evidence: EVIDENCE }, { kind: 'tool.result', tool: 'send_message' }),
        final('done', { kind: 'tool.result', tool: 'goal_complete', contains: 'recorded' }),
      ],
      other: [],
    });
    rt = await fx.start(model);
    const events: ActorEvent[] = [];
    rt.node.inspect.onActorEvent((e) => events.push(e));
    const first = rt.node.inspect.actors();
    // Every configured goal is there before it starts: under its agent, not started, its limits shown.
    expect(first.actors.map((a) => [a.id, a.children.map((c) => c.id)])).toEqual([
      ['worker', ['g']],
      ['other', ['idle-goal']],
    ]);
    expect(find(first.actors, 'g')).toEqual({
      id: 'g',
      kind: 'goal',
      machine: 'goal',
      state: 'not_started',
      parked: false,
      agentId: 'worker',
      budgets: {
        iterations: { used: 0, limit: 4 },
        modelCalls: { used: 0, limit: 20 },
        toolCalls: { used: 0, limit: 9 },
      },
      children: [],
    });

    expect(rt.goals.control('g', 'start', 'test').result).toBe('ok');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({})[0],
      20_000,
      'the approval',
    );
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.parked === true,
      10_000,
      'the goal parked',
    );
    const parkedTree = rt.node.inspect.actors();
    expect(find(parkedTree.actors, 'g')).toMatchObject({
      state: 'active.parked',
      status: 'active',
      parked: true,
      budgets: { iterations: { used: 1, limit: 4 } },
    });
    // The iteration's run appears once: under its goal (not beside it under the agent), its approval under it.
    const parkedShape = [
      {
        id: 'worker',
        kind: 'agent',
        parked: false,
        children: [
          {
            id: 'g',
            kind: 'goal',
            parked: true,
            children: [
              {
                id: RUN,
                kind: 'run',
                parked: true,
                children: [{ id: pending.id, kind: 'approval', parked: true, children: [] }],
              },
            ],
          },
        ],
      },
      {
        id: 'other',
        kind: 'agent',
        parked: false,
        children: [{ id: 'idle-goal', kind: 'goal', parked: false, children: [] }],
      },
    ];
    await eventually(
      () => JSON.stringify(shape(rt!.node.inspect.actors().actors)) === JSON.stringify(parkedShape),
      10_000,
      'agent → goal → parked run → approval',
    );
    expect(count(rt.node.inspect.actors().actors, RUN)).toBe(1);
    expect(find(rt.node.inspect.actors().actors, RUN)).toMatchObject({ goalId: 'g', agentId: 'worker' });
    // The events, applied one by one, build the same tree.
    expect(shape(applied(first, events).actors)).toEqual(shape(rt.node.inspect.actors().actors));
    expect(events.find((e) => e.actor.id === RUN && e.type === 'actor.created')?.actor.parentId).toBe('g');
    expect(events.find((e) => e.actor.id === 'g' && e.actor.parked)).toMatchObject({
      type: 'actor.state',
      actor: { kind: 'goal', parentId: 'worker', state: 'active.parked' },
    });

    // Restart: the parked goal and its run come back from the store, in the same places.
    await rt.stop();
    rt = await fx.start(model);
    const restarted = rt.node.inspect.actors();
    expect(JSON.stringify(shape(restarted.actors))).toBe(JSON.stringify(parkedShape));
    expect(find(restarted.actors, 'g')).toMatchObject({ state: 'active.parked', status: 'active' });
    const later: ActorEvent[] = [];
    rt.node.inspect.onActorEvent((e) => later.push(e));

    // Approved: the goal resumes (running, not parked), then the model claims completion.
    expect(rt.decide(pending.id, 'approved', 'test').ok).toBe(true);
    await eventually(
      () => (rt && runtimeInternals(rt))?.store.goals.get('g')?.status === 'complete',
      20_000,
      'the goal complete',
    );
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.state === 'complete',
      10_000,
      'the goal node complete',
    );
    const goalStates = later
      .filter((e) => e.actor.id === 'g')
      .map((e) => `${e.actor.state}:${e.actor.parked}`);
    expect(goalStates).toContain('active.running:false');
    expect(goalStates.indexOf('active.running:false')).toBeLessThan(goalStates.indexOf('complete:false'));
    const done = rt.node.inspect.actors();
    // A finished goal stays (it is configured); its run has ended and left the tree.
    expect(find(done.actors, 'g')).toMatchObject({
      kind: 'goal',
      state: 'complete',
      status: 'complete',
      parked: false,
      children: [],
      budgets: {
        iterations: { used: 1, limit: 4 },
        modelCalls: { used: 3, limit: 20 },
        toolCalls: { used: 2, limit: 9 },
      },
    });
    expect(find(done.actors, RUN)).toBeUndefined();
    expect(later.filter((e) => e.actor.id === RUN).at(-1)?.type).toBe('actor.stopped');
    expect(shape(applied(restarted, later).actors)).toEqual(shape(done.actors));

    // Redacted: ids, states and counters only.
    for (const text of [
      JSON.stringify(events),
      JSON.stringify(later),
      JSON.stringify([first, parkedTree, done]),
    ]) {
      expect(text).not.toContain(OBJECTIVE);
      expect(text).not.toContain('quarterly');
      expect(text).not.toContain(EVIDENCE);
      expect(text).not.toContain('7f3a');
      expect(text).not.toContain('#finance');
    }
    model.scripted.assertConsumed('worker', RUN);

    // After a restart a finished goal is shown from its record alone.
    await rt.stop();
    rt = await fx.start(model);
    expect(find(rt.node.inspect.actors().actors, 'g')).toMatchObject({
      state: 'complete',
      status: 'complete',
      parked: false,
    });
  }, 90_000);

  it('a paused goal shows paused; resumed it goes on; a cancelled one shows cancelled', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask' } },
      surfaces: { goalLoops: [{ id: 'g', agent: 'worker', objective: OBJECTIVE, maxIterations: 3 }] },
    });
    const model = new OfferedTools({
      worker: [call('c1', 'send_message', { channel: '#finance', text: 'x' }), final('sent')],
    });
    rt = await fx.start(model);
    rt.goals.control('g', 'start', 'test');
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.parked === true,
      20_000,
      'the goal parked',
    );
    expect(rt.goals.control('g', 'pause', 'test').result).toBe('ok');
    // Paused while its run waits: the run finishes first, the goal shows paused meanwhile.
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.status === 'paused',
      10_000,
      'the goal node paused',
    );
    expect(find(rt.node.inspect.actors().actors, 'g')).toMatchObject({
      state: 'active.parked',
      parked: true,
    });
    expect(rt.goals.control('g', 'resume', 'test').result).toBe('ok');
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.status === 'active',
      10_000,
      'resumed',
    );
    expect(rt.goals.control('g', 'cancel', 'test').result).toBe('ok');
    await eventually(
      () => find(rt!.node.inspect.actors().actors, 'g')?.state === 'cancelled',
      10_000,
      'the goal node cancelled',
    );
    await eventually(() => find(rt!.node.inspect.actors().actors, RUN) === undefined, 10_000, 'its run gone');
    expect(find(rt.node.inspect.actors().actors, 'g')).toMatchObject({
      status: 'cancelled',
      parked: false,
      children: [],
    });
  }, 60_000);
});
