// The live actor tree (GET /v1/actors, re-fetched on actor.* events) and the graph of the
// selected actor's machine with its current state highlighted.
import { ApiError, getJson, paths } from './api.ts';
import { h } from './dom.ts';
import { graphView } from './graph.ts';
import type { ActorNode, MachineGraph } from './wire.ts';

const MACHINES = ['agent', 'run', 'approval', 'tool-call', 'goal'];

export function actorsView(): { el: HTMLElement; refresh(): void } {
  const tree = h('div', { class: 'actor-tree', 'data-testid': 'actor-tree' });
  const picker = h(
    'select',
    { class: 'machine', 'aria-label': 'machine', 'data-testid': 'machine' },
    MACHINES.map((m) => h('option', { value: m }, m)),
  );
  const graph = h('div', { class: 'graph-pane' });
  const el = h(
    'section',
    { class: 'view actors' },
    h('h2', null, 'Actors'),
    h('div', { class: 'split' }, tree, h('div', null, h('label', null, 'machine ', picker), graph)),
  );
  let selected: { id: string; machine: string; state: string } | null = null;
  let busy = false;
  let again = false;

  const showGraph = async (machine: string, current: string | null) => {
    try {
      const g = await getJson<MachineGraph>(paths.machine(machine));
      graph.replaceChildren(
        h(
          'p',
          { class: 'meta' },
          current === null ? `machine ${machine}` : `machine ${machine}, state ${current}`,
        ),
        graphView(g, current),
      );
    } catch (err) {
      graph.replaceChildren(
        h(
          'p',
          { class: 'empty' },
          err instanceof ApiError && err.status === 404 ? `no machine graph for ${machine}` : String(err),
        ),
      );
    }
  };
  picker.addEventListener('change', () => {
    selected = null;
    void showGraph(picker.value, null);
  });

  const node = (n: ActorNode): HTMLElement =>
    h(
      'li',
      null,
      h(
        'button',
        {
          type: 'button',
          class: `actor kind-${n.kind}${n.parked ? ' parked' : ''}${selected?.id === n.id ? ' selected' : ''}`,
          onclick: () => {
            selected = { id: n.id, machine: n.machine, state: n.state };
            picker.value = n.machine;
            void showGraph(n.machine, n.state);
            refresh();
          },
        },
        h('span', { class: 'kind' }, n.kind),
        h('span', { class: 'id' }, n.id),
        h('span', { class: 'state-value' }, n.state),
        n.status === undefined ? null : h('span', { class: 'badge' }, n.status),
        n.parked ? h('span', { class: 'badge parked' }, 'parked') : null,
        n.tool === undefined ? null : h('code', null, n.tool),
        n.budgets === undefined
          ? null
          : h(
              'span',
              { class: 'budgets' },
              Object.entries(n.budgets).map(([k, b]) =>
                h('span', { class: 'budget' }, `${k} ${b.used}/${b.limit ?? '∞'}`),
              ),
            ),
      ),
      n.children.length === 0 ? null : h('ul', null, n.children.map(node)),
    );

  const find = (nodes: readonly ActorNode[], id: string): ActorNode | null => {
    for (const n of nodes) {
      if (n.id === id) return n;
      const f = find(n.children, id);
      if (f !== null) return f;
    }
    return null;
  };

  const load = async () => {
    try {
      const { actors } = await getJson<{ seq: number; actors: ActorNode[] }>(paths.actors);
      tree.replaceChildren(
        actors.length === 0 ? h('p', { class: 'empty' }, 'No actors.') : h('ul', null, actors.map(node)),
      );
      if (selected !== null) {
        const now = find(actors, selected.id);
        if (now !== null && now.state !== selected.state) {
          selected = { id: now.id, machine: now.machine, state: now.state };
          void showGraph(now.machine, now.state);
        }
      }
    } catch (err) {
      tree.replaceChildren(
        h(
          'p',
          { class: 'empty', 'data-testid': 'actors-unavailable' },
          err instanceof ApiError && err.status === 404
            ? 'The live actor tree is not available on this runtime (GET /v1/actors answered 404). Machine graphs are still shown.'
            : `The actor tree could not be read: ${err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)}`,
        ),
      );
    }
  };

  // One fetch at a time; events during it cause exactly one more.
  const refresh = () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    void load().finally(() => {
      busy = false;
      if (again) {
        again = false;
        refresh();
      }
    });
  };
  void showGraph(picker.value, null);
  return { el, refresh };
}
