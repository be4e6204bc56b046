// The live actor tree (GET /v1/actors, re-fetched on actor.* events) and the diagram of the
// selected actor's machine (the SVG `snotra viz` draws) with its current state highlighted live.
import { ApiError, getJson, paths } from './api.ts';
import { budgetText } from './budget-text.ts';
import { h } from './dom.ts';
import { machineDiagram } from './svg.ts';
import type { ActorNode } from './wire.ts';

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
  let selected: { id: string; kind: string; machine: string; state: string } | null = null;
  let busy = false;
  let again = false;
  let shown: { machine: string; set(state: string | null): void } | null = null;
  let drawing = 0;

  const showGraph = async (machine: string, current: string | null) => {
    // The same machine: the highlight moves in place (no redraw).
    if (shown?.machine === machine) {
      shown.set(current);
      return;
    }
    const mine = ++drawing;
    try {
      const d = await machineDiagram(machine, current);
      if (mine !== drawing) return;
      shown = { machine, set: d.set };
      graph.replaceChildren(d.el);
    } catch (err) {
      if (mine !== drawing) return;
      shown = null;
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
          'aria-pressed': selected?.id === n.id ? 'true' : 'false',
          class: `actor kind-${n.kind}${n.parked ? ' parked' : ''}${selected?.id === n.id ? ' selected' : ''}`,
          onclick: () => {
            selected = { id: n.id, kind: n.kind, machine: n.machine, state: n.state };
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
                h('span', { class: 'budget', 'data-budget': k }, budgetText(k, b.used, b.limit)),
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

  // A run that left the tree ended: its stored state (completed, failed, denied) is the last one.
  const lastState = async (runId: string) => {
    try {
      const { state } = await getJson<{ state: string | null }>(paths.run(runId));
      if (selected?.id !== runId || state === null || state === selected.state) return;
      selected = { ...selected, state };
      void showGraph(selected.machine, state);
    } catch {
      // Not stored (yet): the highlight stays where it was.
    }
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
          selected = { id: now.id, kind: now.kind, machine: now.machine, state: now.state };
          void showGraph(now.machine, now.state);
        } else if (now === null && selected.kind === 'run') void lastState(selected.id);
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
