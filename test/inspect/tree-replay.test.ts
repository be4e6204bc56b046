import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActorTree, type ActorEvent, type ActorFields, type ActorNode } from '../../runtime/inspect/index.ts';
import { LocalTree } from '../../surfaces/cli/inspect/render.ts';
import { runs } from '../support/laws.ts';

type Op =
  | { op: 'agent'; a: number }
  | { op: 'goal'; g: number; a: number; state: number }
  | { op: 'run'; a: number; parent: number | null; goal: number | null; state: number }
  | { op: 'approval'; run: number }
  | { op: 'remove'; pick: number }
  | { op: 'restore'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('agent' as const), a: fc.nat(2) }),
  fc.record({ op: fc.constant('goal' as const), g: fc.nat(2), a: fc.nat(2), state: fc.nat(2) }),
  fc.record({
    op: fc.constant('run' as const),
    a: fc.nat(2),
    parent: fc.option(fc.nat(12), { nil: null }),
    goal: fc.option(fc.nat(2), { nil: null }),
    state: fc.nat(3),
  }),
  fc.record({ op: fc.constant('approval' as const), run: fc.nat(12) }),
  fc.record({ op: fc.constant('remove' as const), pick: fc.nat(40) }),
  fc.record({ op: fc.constant('restore' as const), pick: fc.nat(40) }),
);

const STATES = ['running.thinking', 'running.acting', 'waiting_for_approval', 'resuming'];
const GOAL_STATES = ['active.running', 'active.parked', 'paused'];

/**
 * Applies the ops to a tree. A run's parent is an older run (as delegation makes them), so
 * parents form no loop; a removed run may come back (restored after a restart).
 */
function apply(tree: ActorTree, ops: readonly Op[], removed: ActorFields[] = []): void {
  const ids: string[] = [];
  let runs = 0;
  let approvals = 0;
  for (const o of ops) {
    if (o.op === 'agent') {
      tree.put({ id: `agent${o.a}`, kind: 'agent', machine: 'agent', state: 'ready', parked: false });
      ids.push(`agent${o.a}`);
    } else if (o.op === 'goal') {
      // A goal node (its state changes when put again); its agent may not exist yet.
      tree.put({
        id: `goal${o.g}`,
        kind: 'goal',
        machine: 'goal',
        state: GOAL_STATES[o.state] as string,
        parked: o.state === 1,
        agentId: `agent${o.a}`,
      });
      ids.push(`goal${o.g}`);
    } else if (o.op === 'run') {
      // Re-putting the last run changes its state; otherwise a new run (its parent may not exist yet).
      const n = o.state === 3 && runs > 0 ? runs - 1 : runs++;
      const id = `run${n}`;
      const parent = o.parent === null || o.parent >= n ? {} : { parentRunId: `run${o.parent}` };
      const f: ActorFields = {
        id,
        kind: 'run',
        machine: 'run',
        state: STATES[o.state] as string,
        parked: o.state === 2,
        agentId: `agent${o.a}`,
        ...parent,
        // A goal's iteration run (it hangs under its goal unless it has a parent run).
        ...(o.goal === null ? {} : { goalId: `goal${o.goal}` }),
      };
      tree.put(f);
      ids.push(id);
    } else if (o.op === 'approval') {
      const id = `apr${approvals++}`;
      tree.put({
        id,
        kind: 'approval',
        machine: 'approval',
        state: 'requested',
        parked: true,
        runId: `run${o.run}`,
        agentId: 'agent0',
        tool: 't',
      });
      ids.push(id);
    } else if (o.op === 'remove' && ids.length > 0) {
      const id = ids[o.pick % ids.length] as string;
      const f = tree.get(id);
      if (f !== undefined) removed.push(f);
      tree.remove(id);
    } else if (o.op === 'restore' && removed.length > 0) {
      tree.put(removed[o.pick % removed.length] as ActorFields);
    }
  }
}

function canonical(nodes: readonly ActorNode[]): unknown[] {
  return [...nodes]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((n) => ({ ...n, children: canonical(n.children) }));
}

describe('a client applying the actor.* changes in order keeps the same tree as GET /v1/actors', () => {
  it('for any sequence of creations, changes and removals of agents, goals, runs and approvals, parents arriving late or leaving first (property)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), fc.nat(60), (ops, cut) => {
        const tree = new ActorTree();
        const events: ActorEvent[] = [];
        tree.on((e) => events.push(e));
        // A client that fetched the tree after `cut` ops, then applies the later changes.
        const removed: ActorFields[] = [];
        apply(tree, ops.slice(0, cut), removed);
        const fetched = tree.snapshot();
        const seen = events.length;
        apply(tree, ops.slice(cut), removed);
        const local = new LocalTree();
        local.reset(fetched);
        for (const e of events.slice(seen)) local.apply(e);
        // The same nodes under the same parents (sibling order may differ: a fetched tree is read depth first).
        expect(local.tree().seq).toBe(tree.seq);
        expect(canonical(local.tree().actors)).toEqual(canonical(tree.snapshot().actors));
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      }),
      { numRuns: runs(500) },
    );
  });

  it('a sub-agent run created before its parent run moves under it when the parent comes, and back under its agent when it goes', () => {
    const tree = new ActorTree();
    const events: ActorEvent[] = [];
    tree.on((e) => events.push(e));
    tree.put({ id: 'lead', kind: 'agent', machine: 'agent', state: 'ready', parked: false });
    tree.put({
      id: 'c',
      kind: 'run',
      machine: 'run',
      state: 'waiting_for_approval',
      parked: true,
      agentId: 'lead',
      parentRunId: 'p',
    });
    tree.put({ id: 'p', kind: 'run', machine: 'run', state: 'resuming', parked: false, agentId: 'lead' });
    tree.remove('p');
    expect(events.map((e) => [e.type, e.actor.id, e.actor.parentId, e.cause ?? null])).toEqual([
      ['actor.created', 'lead', null, null],
      ['actor.created', 'c', 'lead', null],
      ['actor.created', 'p', 'lead', null],
      ['actor.state', 'c', 'p', 'parent'],
      ['actor.stopped', 'p', 'lead', null],
      ['actor.state', 'c', 'lead', 'parent'],
    ]);
  });

  it('a goal iteration run hangs under its goal (not its agent) once the goal is there, and moves back under its agent when the goal goes', () => {
    const tree = new ActorTree();
    const events: ActorEvent[] = [];
    tree.on((e) => events.push(e));
    tree.put({ id: 'worker', kind: 'agent', machine: 'agent', state: 'ready', parked: false });
    tree.put({
      id: 'worker:goal:g:1:1',
      kind: 'run',
      machine: 'run',
      state: 'waiting_for_approval',
      parked: true,
      agentId: 'worker',
      goalId: 'g',
    });
    tree.put({
      id: 'g',
      kind: 'goal',
      machine: 'goal',
      state: 'active.parked',
      parked: true,
      agentId: 'worker',
    });
    const shape = (nodes: readonly ActorNode[]): unknown => nodes.map((n) => [n.id, shape(n.children)]);
    expect(shape(tree.snapshot().actors)).toEqual([['worker', [['g', [['worker:goal:g:1:1', []]]]]]]);
    tree.remove('g');
    expect(events.map((e) => [e.type, e.actor.id, e.actor.parentId, e.cause ?? null])).toEqual([
      ['actor.created', 'worker', null, null],
      ['actor.created', 'worker:goal:g:1:1', 'worker', null],
      ['actor.created', 'g', 'worker', null],
      ['actor.state', 'worker:goal:g:1:1', 'g', 'parent'],
      ['actor.stopped', 'g', 'worker', null],
      ['actor.state', 'worker:goal:g:1:1', 'worker', 'parent'],
    ]);
    // A node of another kind under the goal's id is not taken for the goal.
    const clash = new ActorTree();
    clash.put({ id: 'g', kind: 'agent', machine: 'agent', state: 'ready', parked: false });
    clash.put({ id: 'r', kind: 'run', machine: 'run', state: 'resuming', parked: false, goalId: 'g' });
    expect(shape(clash.snapshot().actors)).toEqual([
      ['g', []],
      ['r', []],
    ]);
  });
});
