import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import type { AnyStateMachine, AnyStateNode } from 'xstate';

/** A state of a machine graph. `id` is the full dotted id (`run.running.acting`). */
export interface GraphState {
  readonly id: string;
  /** The state's own key (`acting`). */
  readonly key: string;
  readonly parent: string | null;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** For compound states: the id of the initial child. */
  readonly initial: string | null;
  /** Names of the actors invoked while in this state. */
  readonly invokes: readonly string[];
}

/** A transition: `event` is the event type in readable form (`done(modelStep)`, `always`, `after(5000)`). */
export interface GraphTransition {
  readonly source: string;
  readonly target: string;
  readonly event: string;
  /** The guard's name (`isAllowed`, `!isFinal`), `guard` for an inline one, or null. */
  readonly guard: string | null;
}

/** The graph of one machine, generated from its definition. */
export interface MachineGraph {
  readonly machine: string;
  readonly states: readonly GraphState[];
  readonly transitions: readonly GraphTransition[];
}

function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const g = guard as { name?: string; check?: unknown; guards?: unknown[] };
    return g.name !== undefined && g.name !== '' && g.name !== 'guard' ? g.name : 'guard';
  }
  const g = guard as { type?: string; params?: unknown };
  return typeof g.type === 'string' ? g.type : 'guard';
}

function eventLabel(type: string, node: AnyStateNode): string {
  const invoke = (id: string) => {
    for (const n of [node, ...allNodes(node.machine.root)]) {
      const found = n.invoke.find((i) => i.id === id);
      if (found !== undefined) return typeof found.src === 'string' ? found.src : id;
    }
    return id;
  };
  if (type === '') return 'always';
  const done = /^xstate\.done\.actor\.(.+)$/.exec(type);
  if (done) return `done(${invoke(done[1] as string)})`;
  const error = /^xstate\.error\.actor\.(.+)$/.exec(type);
  if (error) return `error(${invoke(error[1] as string)})`;
  const after = /^xstate\.after\.(\d+)\./.exec(type);
  if (after) return `after(${after[1] as string})`;
  return type;
}

function allNodes(root: AnyStateNode): AnyStateNode[] {
  const out: AnyStateNode[] = [root];
  for (const child of Object.values(root.states)) out.push(...allNodes(child));
  return out;
}

/**
 * The graph of a machine, from its definition: every state (nested, with its type, initial
 * child and invoked actors) and every transition (events, eventless `always` ones, invoke
 * done/error and delayed ones) with its guard. Structure through `@xstate/graph`'s
 * `toDirectedGraph`; eventless transitions, which it leaves out, from the state nodes.
 */
export function machineGraph(name: string, machine: AnyStateMachine): MachineGraph {
  const states: GraphState[] = [];
  const transitions: GraphTransition[] = [];
  const visit = (n: DirectedGraphNode, parent: string | null): void => {
    const node = n.stateNode;
    const initialKey = node.type === 'compound' ? node.config.initial : undefined;
    states.push({
      id: n.id,
      key: node.key,
      parent,
      type: node.type,
      initial: typeof initialKey === 'string' ? `${n.id}.${initialKey}` : null,
      invokes: node.invoke.map((i) => (typeof i.src === 'string' ? i.src : i.id)),
    });
    for (const e of n.edges) {
      transitions.push({
        source: e.source.id,
        target: e.target.id,
        event: eventLabel(e.transition.eventType, node),
        guard: guardName(e.transition.guard),
      });
    }
    for (const t of node.always ?? []) {
      for (const target of t.target ?? []) {
        transitions.push({ source: n.id, target: target.id, event: 'always', guard: guardName(t.guard) });
      }
    }
    for (const c of n.children) visit(c, n.id);
  };
  visit(toDirectedGraph(machine), null);
  return { machine: name, states, transitions };
}
