// A machine's diagram as `snotra viz` draws it (GET /v1/machines/:name/svg, Graphviz's SVG), with
// the current state and its ancestors highlighted. Each state of the SVG is the <g> whose <title>
// is its id; a compound state is the cluster titled `cluster_<id>`.
import { getJson, paths } from './api.ts';
import { h } from './dom.ts';

const cache = new Map<string, Promise<string>>();

/** The SVG text of a machine, fetched once per page. */
export function machineSvgText(machine: string): Promise<string> {
  let p = cache.get(machine);
  if (p === undefined) {
    p = getJson<{ svg: string }>(paths.machineSvg(machine)).then((r) => r.svg);
    cache.set(machine, p);
    p.catch(() => cache.delete(machine));
  }
  return p;
}

/** The ids to mark for a dotted state value: `running.acting` → root.running (active), root.running.acting (current). */
export function stateIds(machine: string, state: string | null): string[] {
  if (state === null || state === '') return [];
  const out: string[] = [];
  let id = machine;
  for (const part of state.split('.')) {
    id = `${id}.${part}`;
    out.push(id);
  }
  return out;
}

/** Parses the diagram (nothing that could run is kept) and tags each state group with `data-state`. */
function parse(text: string): SVGSVGElement | null {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') return null;
  for (const bad of svg.querySelectorAll('script, foreignObject, a')) bad.remove();
  for (const el of svg.querySelectorAll('*'))
    for (const attr of [...el.attributes]) if (/^on/i.test(attr.name)) el.removeAttribute(attr.name);
  for (const g of svg.querySelectorAll('g.node, g.cluster')) {
    const title = g.querySelector(':scope > title')?.textContent ?? '';
    const id = g.classList.contains('cluster') ? title.replace(/^cluster_/, '') : title;
    if (!id.endsWith('#entry')) g.setAttribute('data-state', id);
  }
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  return document.importNode(svg, true) as unknown as SVGSVGElement;
}

/** Moves the highlight: ancestors `active`, the state itself `current` (and named for screen readers). */
export function highlight(svg: SVGSVGElement, machine: string, state: string | null): void {
  const ids = stateIds(machine, state);
  const root = svg.querySelector(`g[data-state="${CSS.escape(machine)}"]`);
  for (const g of svg.querySelectorAll('g[data-state]')) g.classList.remove('state', 'active', 'current');
  root?.classList.add('state', 'active');
  ids.forEach((id, i) => {
    const g = svg.querySelector(`g[data-state="${CSS.escape(id)}"]`);
    g?.classList.add('state', i === ids.length - 1 ? 'current' : 'active');
  });
}

/** The diagram of a machine with `state` highlighted; `set(state)` moves the highlight in place. */
export async function machineDiagram(
  machine: string,
  state: string | null,
): Promise<{ el: HTMLElement; set(state: string | null): void }> {
  const svg = parse(await machineSvgText(machine));
  const caption = h('p', { class: 'meta', 'aria-live': 'polite' });
  const el = h(
    'figure',
    { class: 'graph diagram', 'data-testid': 'machine-graph', 'data-machine': machine },
    svg ?? h('p', { class: 'empty' }, 'The diagram could not be read.'),
    h('figcaption', null, caption),
  );
  if (svg !== null) {
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `state diagram of the ${machine} machine`);
  }
  const set = (s: string | null) => {
    caption.textContent = s === null ? `machine ${machine}` : `machine ${machine}, state ${s}`;
    el.dataset.current = s ?? '';
    if (svg !== null) highlight(svg, machine, s);
  };
  set(state);
  return { el, set };
}
