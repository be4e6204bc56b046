import type { ActorEvent, ActorFields, ActorNode, ActorTreeSnapshot } from '../../../runtime/index.ts';
import { oneLine } from '../run/escape.ts';

/**
 * The tree as `snotra inspect` holds it between changes: the last tree received, with each
 * `actor.*` change applied to it (nodes by id, each with its parent's id).
 */
export class LocalTree {
  #nodes = new Map<string, { fields: ActorFields; parentId: string | null }>();
  #seq = 0;

  get seq(): number {
    return this.#seq;
  }

  /** Replaces everything with a whole tree. */
  reset(tree: ActorTreeSnapshot): void {
    this.#nodes = new Map();
    this.#seq = tree.seq;
    const walk = (nodes: readonly ActorNode[], parentId: string | null) => {
      for (const { children, ...fields } of nodes) {
        this.#nodes.set(fields.id, { fields, parentId });
        walk(children, fields.id);
      }
    };
    walk(tree.actors, null);
  }

  /** Applies one change. */
  apply(e: ActorEvent): void {
    this.#seq = e.seq;
    const { parentId, ...fields } = e.actor;
    if (e.type === 'actor.stopped') this.#nodes.delete(fields.id);
    else this.#nodes.set(fields.id, { fields, parentId });
  }

  /** The nested tree (a node whose parent is gone is shown at the top). */
  tree(): ActorTreeSnapshot {
    const built = new Map<string, ActorNode>();
    for (const [id, n] of this.#nodes) built.set(id, { ...n.fields, children: [] });
    const roots: ActorNode[] = [];
    for (const [id, n] of this.#nodes) {
      const node = built.get(id) as ActorNode;
      const parent = n.parentId === null || n.parentId === id ? undefined : built.get(n.parentId);
      (parent?.children ?? roots).push(node);
    }
    return { seq: this.#seq, actors: roots };
  }
}

/** A budget's amount: a cost in dollars (`$0.0123`, `$0.05`: at most 6 decimals), anything else as the number it is. */
function amount(name: string, n: number | null): string {
  if (n === null) return '∞';
  if (name !== 'costUsd') return `${n}`;
  const [whole, frac = ''] = (Math.round(n * 1e6) / 1e6).toFixed(6).replace(/0+$/, '').split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

function budgetsText(f: ActorFields): string {
  return Object.entries(f.budgets ?? {})
    .map(
      ([name, b]) => `${name === 'costUsd' ? 'cost' : name} ${amount(name, b.used)}/${amount(name, b.limit)}`,
    )
    .join(', ');
}

/** One node as a line: id, kind, state, and what else it shows (escaped: ids may come from a config). */
function nodeLine(f: ActorFields): string {
  const parts = [f.id, f.kind, f.state];
  if (f.status !== undefined && f.status !== f.state) parts.push(`(${f.status})`);
  if (f.tool !== undefined) parts.push(f.tool);
  if (f.parked) parts.push('PARKED');
  const budgets = budgetsText(f);
  if (budgets !== '') parts.push(`[${budgets}]`);
  return oneLine(parts.join('  '), 400);
}

/** The tree as indented lines under a header naming the change (or `tree` for a whole tree). */
export function renderTree(tree: ActorTreeSnapshot, change: ActorEvent | null): string {
  const header =
    change === null
      ? `seq ${tree.seq}: ${tree.actors.length === 0 ? 'no actors' : 'actors'}`
      : oneLine(
          `seq ${change.seq}: ${change.type} ${change.actor.kind} ${change.actor.id} → ${change.actor.state}`,
          400,
        );
  const lines = [header];
  const walk = (nodes: readonly ActorNode[], prefix: string) => {
    nodes.forEach((n, i) => {
      const last = i === nodes.length - 1;
      lines.push(`${prefix}${last ? '└─ ' : '├─ '}${nodeLine(n)}`);
      walk(n.children, `${prefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(tree.actors, '');
  return `${lines.join('\n')}\n\n`;
}
