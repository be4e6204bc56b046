import { sameFields } from './nodes.ts';
import type { ActorEvent, ActorEventType, ActorFields, ActorNode, ActorTreeSnapshot } from './types.ts';

/**
 * Nodes the tree holds at most: live runs are capped per agent, but parked runs (and their
 * approvals) wait for a human for as long as their approval lives. A node is a few hundred bytes.
 */
export const DEFAULT_TREE_CAPACITY = 50_000;

/** A sub-agent chain deeper than this is cut at the tree's top level (delegation is bounded well below). */
const MAX_DEPTH = 64;

/**
 * The live actor tree in memory: a flat map of nodes (each knows its parent by id), a sequence
 * number counting the changes, and listeners told of each change. Bounded: past `capacity`
 * nodes a new node is not added and counted in `omitted`. A change costs one small object per
 * listener call; the nested tree is only built by `snapshot()`.
 */
export class ActorTree {
  readonly #nodes = new Map<string, ActorFields>();
  readonly #listeners = new Set<(e: ActorEvent) => void>();
  /** Node ids by each id they may hang under (their run or parent run, their agent). */
  readonly #referring = new Map<string, Set<string>>();
  #seq = 0;
  #omitted = 0;

  constructor(private readonly capacity = DEFAULT_TREE_CAPACITY) {}

  /** The sequence number of the last change. */
  get seq(): number {
    return this.#seq;
  }

  /** Nodes not added because the tree was full. */
  get omitted(): number {
    return this.#omitted;
  }

  /** The node of an id, or undefined. */
  get(id: string): ActorFields | undefined {
    return this.#nodes.get(id);
  }

  /** Adds a node (`actor.created`) or updates it (`actor.state`, only when something shown changed). */
  put(fields: ActorFields, cause?: string): void {
    const prev = this.#nodes.get(fields.id);
    if (prev === undefined) {
      if (this.#nodes.size >= this.capacity) {
        this.#omitted += 1;
        return;
      }
      this.#nodes.set(fields.id, fields);
      this.#link(fields);
      this.#emit('actor.created', fields, cause);
      this.#reparented(this.#childrenOf(fields.id));
      return;
    }
    if (prev.kind !== fields.kind) return; // Ids are unique across kinds; a clash changes nothing.
    if (sameFields(prev, fields)) return;
    const moved =
      prev.parentRunId !== fields.parentRunId ||
      prev.goalId !== fields.goalId ||
      prev.runId !== fields.runId ||
      prev.agentId !== fields.agentId;
    if (moved) this.#unlink(prev);
    this.#nodes.set(fields.id, fields);
    if (moved) this.#link(fields);
    this.#emit('actor.state', fields, cause);
  }

  /** Removes a node (`actor.stopped`); its children move up to its parent's place. */
  remove(id: string, cause?: string): void {
    const prev = this.#nodes.get(id);
    if (prev === undefined) return;
    const children = this.#childrenOf(id);
    this.#emit('actor.stopped', prev, cause);
    this.#nodes.delete(id);
    this.#unlink(prev);
    this.#reparented(children);
  }

  /** The ids a node may hang under: the run it belongs to, then its goal (a goal's runs), then its agent. */
  #refs(f: ActorFields): string[] {
    if (f.kind === 'agent') return [];
    const owner = f.kind === 'approval' ? f.runId : f.kind === 'run' ? f.parentRunId : undefined;
    const goal = f.kind === 'run' ? f.goalId : undefined;
    return [owner, goal, f.agentId].filter((r): r is string => r !== undefined && r !== f.id);
  }

  #link(f: ActorFields): void {
    for (const ref of this.#refs(f)) {
      let set = this.#referring.get(ref);
      if (set === undefined) this.#referring.set(ref, (set = new Set()));
      set.add(f.id);
    }
  }

  #unlink(f: ActorFields): void {
    for (const ref of this.#refs(f)) {
      const set = this.#referring.get(ref);
      set?.delete(f.id);
      if (set?.size === 0) this.#referring.delete(ref);
    }
  }

  /** The nodes whose parent is `id` now. */
  #childrenOf(id: string): ActorFields[] {
    const out: ActorFields[] = [];
    for (const child of this.#referring.get(id) ?? []) {
      const f = this.#nodes.get(child);
      if (f !== undefined && this.parentOf(f) === id) out.push(f);
    }
    return out;
  }

  /**
   * Nodes that got a new parent (it came, or it went) are sent again as `actor.state` with their
   * new `parentId`, so a client applying the changes one by one keeps the same tree as `snapshot()`.
   */
  #reparented(nodes: readonly ActorFields[]): void {
    for (const f of nodes) if (this.#nodes.has(f.id)) this.#emit('actor.state', f, 'parent');
  }

  /** Listens to every change; returns the removal. A listener that throws is ignored. */
  on(listener: (e: ActorEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The id of a node's parent in the tree now: a run's parent run, else its goal (the run of a
   * goal's iteration), else its agent; an approval's run; a goal's agent. A parent of the wrong
   * kind (an id clash) is not followed.
   */
  parentOf(f: ActorFields): string | null {
    const present = (id: string | undefined, kind: ActorFields['kind']) =>
      id !== undefined && id !== f.id && this.#nodes.get(id)?.kind === kind;
    if (f.kind === 'approval') {
      if (present(f.runId, 'run')) return f.runId as string;
      return present(f.agentId, 'agent') ? (f.agentId as string) : null;
    }
    if (f.kind === 'run') {
      if (present(f.parentRunId, 'run')) return f.parentRunId as string;
      if (present(f.goalId, 'goal')) return f.goalId as string;
      return present(f.agentId, 'agent') ? (f.agentId as string) : null;
    }
    if (f.kind === 'goal') return present(f.agentId, 'agent') ? (f.agentId as string) : null;
    return null;
  }

  /** The nested tree now: agents at the top, then goals and runs, a goal's runs, sub-agent runs and approvals, in creation order. */
  snapshot(): ActorTreeSnapshot & { omitted?: number } {
    const built = new Map<string, ActorNode>();
    for (const [id, f] of this.#nodes) built.set(id, { ...f, children: [] });
    const roots: ActorNode[] = [];
    for (const [id, node] of built) {
      const parent = this.#reachableParent(id);
      if (parent === null) roots.push(node);
      else built.get(parent)?.children.push(node);
    }
    return { seq: this.#seq, actors: roots, ...(this.#omitted > 0 ? { omitted: this.#omitted } : {}) };
  }

  /** A node's parent unless following parents from it loops back or runs too deep (then it is a root). */
  #reachableParent(id: string): string | null {
    const f = this.#nodes.get(id) as ActorFields;
    const parent = this.parentOf(f);
    let at: string | null = parent;
    for (let depth = 0; at !== null; depth += 1) {
      if (at === id || depth > MAX_DEPTH) return null;
      const up = this.#nodes.get(at);
      at = up === undefined ? null : this.parentOf(up);
    }
    return parent;
  }

  #emit(type: ActorEventType, fields: ActorFields, cause: string | undefined): void {
    const event: ActorEvent = {
      type,
      seq: ++this.#seq,
      actor: { ...fields, parentId: this.parentOf(fields) },
      ...(cause === undefined ? {} : { cause }),
    };
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not reach the actor whose change it heard.
      }
    }
  }
}
