// A machine graph (GET /v1/machines/:name) as nested state boxes with their transitions; the
// current state and its ancestors highlighted.
import { h } from './dom.ts';
import type { MachineGraph } from './wire.ts';

/** The ids to highlight for a dotted state value (`acting.executing` → root.acting, root.acting.executing). */
export function activeIds(graph: MachineGraph, state: string | null): Set<string> {
  const out = new Set<string>();
  const root = graph.states.find((s) => s.parent === null);
  if (root === undefined || state === null || state === '') return out;
  let id = root.id;
  for (const part of state.split('.')) {
    id = `${id}.${part}`;
    out.add(id);
  }
  return out;
}

export function graphView(graph: MachineGraph, state: string | null): HTMLElement {
  const active = activeIds(graph, state);
  const keyOf = new Map(graph.states.map((s) => [s.id, s.key]));
  const box = (id: string): HTMLElement => {
    const s = graph.states.find((x) => x.id === id)!;
    const children = graph.states.filter((c) => c.parent === id);
    const out = graph.transitions.filter((t) => t.source === id);
    const leaf = active.size > 0 && [...active].pop() === id;
    return h(
      'div',
      {
        class: `state type-${s.type}${active.has(id) ? ' active' : ''}${leaf ? ' current' : ''}`,
        'data-state': id,
      },
      h('div', { class: 'state-name' }, s.key, s.type === 'final' ? ' (final)' : ''),
      s.invokes.length === 0 ? null : h('div', { class: 'invokes' }, `invokes ${s.invokes.join(', ')}`),
      out.length === 0
        ? null
        : h(
            'ul',
            { class: 'transitions' },
            out.map((t) =>
              h(
                'li',
                null,
                h('span', { class: 'event' }, t.event),
                t.guard === null ? '' : ` [${t.guard}]`,
                ' → ',
                keyOf.get(t.target) ?? t.target,
              ),
            ),
          ),
      children.length === 0
        ? null
        : h(
            'div',
            { class: 'children' },
            children.map((c) => box(c.id)),
          ),
    );
  };
  const root = graph.states.find((s) => s.parent === null);
  return h(
    'div',
    { class: 'graph', 'data-testid': 'machine-graph', 'data-machine': graph.machine },
    root === undefined ? 'empty machine' : box(root.id),
  );
}
