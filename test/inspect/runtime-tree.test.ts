import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { ActorEvent, ActorNode } from '../../runtime/inspect/index.ts';
import type { Runtime } from '../../runtime/runtime.ts';
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
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'the nightly text' } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'notified' } },
];

const config = {
  agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
};

function find(nodes: readonly ActorNode[], id: string): ActorNode | undefined {
  for (const n of nodes) {
    if (n.id === id) return n;
    const c = find(n.children, id);
    if (c !== undefined) return c;
  }
  return undefined;
}

describe('the live actor tree of a runtime', () => {
  it('agents at the top; a parked run with its approval under it; kept across a restart; gone once decided and ended', async () => {
    fx = runtimeFixture(config);
    const model = new ScriptedModel({ worker: NOTIFY });
    rt = await fx.start(model);
    const events: ActorEvent[] = [];
    rt.node.inspect.onActorEvent((e) => events.push(e));
    expect(rt.node.inspect.actors().actors).toMatchObject([
      { id: 'worker', kind: 'agent', machine: 'agent', state: 'ready', parked: false, children: [] },
    ]);
    const runId = await rt.runs.runTask('worker', 'nightly', 'tell #ops');
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
      10_000,
      'an approval',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 10_000, 'the park');
    const tree = rt.node.inspect.actors();
    const run = find(tree.actors, runId);
    expect(run).toMatchObject({
      kind: 'run',
      machine: 'run',
      state: 'waiting_for_approval',
      parked: true,
      status: 'waiting_for_approval',
      agentId: 'worker',
      budgets: { modelCalls: { used: 1, limit: 5 }, toolCalls: { limit: 5 } },
    });
    expect(find(tree.actors, 'worker')?.children.map((c) => c.id)).toEqual([runId]);
    expect(run?.children).toEqual([
      {
        id: pending.id,
        kind: 'approval',
        machine: 'approval',
        state: 'requested',
        parked: true,
        status: 'pending',
        agentId: 'worker',
        runId,
        tool: 'send_message',
        children: [],
      },
    ]);
    // The change events: numbered in order, the run's parent is its agent, the approval's its run.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => events[0]!.seq + i));
    expect(tree.seq).toBe(events.at(-1)?.seq);
    expect(events.find((e) => e.type === 'actor.created' && e.actor.id === runId)?.actor.parentId).toBe(
      'worker',
    );
    expect(events.find((e) => e.actor.id === pending.id)).toMatchObject({
      type: 'actor.created',
      actor: { parentId: runId, tool: 'send_message' },
    });
    // No argument value in anything the tree shows.
    expect(JSON.stringify(events)).not.toContain('nightly text');
    expect(JSON.stringify(tree)).not.toContain('#ops');

    // Restart: no live actor for the run; the tree still shows it and its approval, from the store.
    await rt.stop();
    rt = await fx.start(model);
    expect(runtimeInternals(rt).runs.isLive(runId)).toBe(false);
    const after = rt.node.inspect.actors();
    expect(find(after.actors, runId)).toMatchObject({ parked: true, state: 'waiting_for_approval' });
    expect(find(after.actors, pending.id)).toMatchObject({ parked: true, status: 'pending' });
    expect(find(after.actors, 'worker')?.children.map((c) => c.id)).toEqual([runId]);

    const later: ActorEvent[] = [];
    rt.node.inspect.onActorEvent((e) => later.push(e));
    expect(rt.decide(pending.id, 'approved', 'alice').ok).toBe(true);
    await rt.waitForRun(runId);
    await eventually(
      () => find(rt!.node.inspect.actors().actors, runId) === undefined,
      10_000,
      'the run gone',
    );
    expect(find(rt.node.inspect.actors().actors, pending.id)).toBeUndefined();
    expect(later.find((e) => e.actor.id === pending.id)).toMatchObject({
      type: 'actor.stopped',
      cause: 'approval.approved',
    });
    expect(later.filter((e) => e.actor.id === runId && e.type === 'actor.state').length).toBeGreaterThan(0);
    expect(later.filter((e) => e.actor.id === runId).at(-1)?.type).toBe('actor.stopped');
  }, 60_000);

  it('a sub-agent run sits under its parent run, its parked approval under it, before and after a restart', async () => {
    fx = runtimeFixture({
      agents: { lead: { mode: 'ask' }, notifier: { mode: 'ask', tools: ['send_message'] } },
    });
    const model = new ScriptedModel({
      lead: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 's1', tool: 'spawn_agent', args: { profile: 'notifier', task: 'tell #ops' } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'spawn_agent', contains: 'completed' },
          respond: { kind: 'final', text: 'delegated' },
        },
      ],
      notifier: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'n1', tool: 'send_message', args: { channel: '#ops', text: 'done' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'sent' } },
      ],
    });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('lead', 'nightly', 'delegate the notification');
    const childRunId = `${runId}/s1`;
    const pending = await eventually(
      () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
      10_000,
      'the child approval',
    );
    await eventually(
      () => !(rt && runtimeInternals(rt))?.runs.isLive(childRunId),
      10_000,
      'the child to park',
    );
    const shape = (nodes: readonly ActorNode[]): unknown =>
      nodes.map((n) => ({ id: n.id, kind: n.kind, parked: n.parked, children: shape(n.children) }));
    const expected = [
      {
        id: 'lead',
        kind: 'agent',
        parked: false,
        children: [
          {
            id: runId,
            kind: 'run',
            parked: false,
            children: [
              {
                id: childRunId,
                kind: 'run',
                parked: true,
                children: [{ id: pending.id, kind: 'approval', parked: true, children: [] }],
              },
            ],
          },
        ],
      },
      { id: 'notifier', kind: 'agent', parked: false, children: [] },
    ];
    await eventually(
      () => JSON.stringify(shape(rt!.node.inspect.actors().actors)) === JSON.stringify(expected),
      10_000,
      'the tree of parent, child and approval',
    );
    expect(find(rt.node.inspect.actors().actors, childRunId)).toMatchObject({
      agentId: 'notifier',
      parentRunId: runId,
      state: 'waiting_for_approval',
    });

    await rt.stop();
    rt = await fx.start(model);
    // The child has no live actor now: it and its approval come from the store, under the parent.
    await eventually(
      () => JSON.stringify(shape(rt!.node.inspect.actors().actors)) === JSON.stringify(expected),
      10_000,
      'the same tree after the restart',
    );
    expect(runtimeInternals(rt).runs.isLive(childRunId)).toBe(false);
  }, 60_000);
});
