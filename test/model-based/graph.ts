// What the model-based path suites share: the machine's state nodes, the done and error events
// of its invoked effects (as `@xstate/graph` needs them listed), the ids of a state value, the
// resting states a path must reach, and a seeded sample of a long list of paths.
import type { AnyStateMachine, AnyStateNode, EventObject } from 'xstate';

/** Every state node of a machine, the root included. */
export function stateNodes(n: AnyStateNode): AnyStateNode[] {
  return [n, ...Object.values(n.states).flatMap(stateNodes)];
}

/** The done and error events of a machine's invoked effects, named by their `src`. */
export function effectEvents(machine: AnyStateMachine) {
  const invokeId = new Map<string, string>();
  for (const n of stateNodes(machine.root))
    for (const i of n.invoke) invokeId.set(typeof i.src === 'string' ? i.src : i.id, i.id);
  const idOf = (src: string): string => {
    const id = invokeId.get(src);
    if (id === undefined) throw new Error(`machine ${machine.id}: no state invokes "${src}"`);
    return id;
  };
  return {
    done: (src: string, output: unknown): EventObject =>
      ({ type: `xstate.done.actor.${idOf(src)}`, output }) as EventObject,
    error: (src: string): EventObject =>
      ({ type: `xstate.error.actor.${idOf(src)}`, error: new Error(`${src} failed`) }) as EventObject,
  };
}

/** The ids of the state nodes a state value is in (`run.running.acting.deciding` and its parents). */
export function stateIds(value: unknown, prefix: string): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [`${prefix}.${k}`, ...stateIds(v, `${prefix}.${k}`)]);
}

/**
 * The resting states of a machine: atomic and final ones without eventless transitions (a
 * transient state is left in the same step, so it is never persisted).
 */
export function restingStates(machine: AnyStateMachine): string[] {
  return stateNodes(machine.root)
    .filter((n) => (n.type === 'atomic' || n.type === 'final') && (n.always ?? []).length === 0)
    .map((n) => n.id);
}

/** The resting states of a machine that no path reached (there are at least `min` of them in all). */
export function unreached(machine: AnyStateMachine, reached: ReadonlySet<string>, min: number): string[] {
  const resting = restingStates(machine);
  if (resting.length < min)
    throw new Error(`machine ${machine.id}: ${resting.length} resting states, expected ${min} or more`);
  return resting.filter((id) => !reached.has(id));
}

/** The events of a path, without the machine's own start. */
export function pathEvents(path: { steps: readonly { event: unknown }[] }): EventObject[] {
  return path.steps.map((s) => s.event as EventObject).filter((e) => e.type !== 'xstate.init');
}

/** `n` items of `list` picked with a seeded generator (mulberry32): the same seed, the same pick. */
export function sample<T>(list: readonly T[], n: number, seed: number): T[] {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rest = [...list];
  const out: T[] = [];
  while (out.length < n && rest.length > 0)
    out.push(rest.splice(Math.floor(next() * rest.length), 1)[0] as T);
  return out;
}
