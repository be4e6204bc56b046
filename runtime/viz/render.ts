import type { GraphState, GraphTransition, MachineGraph } from './graph.ts';

/** The formats `snotra viz` writes. */
export const VIZ_FORMATS = ['mermaid', 'dot', 'svg', 'json'] as const;
export type VizFormat = (typeof VIZ_FORMATS)[number];

const safeId = (id: string): string => id.replace(/[^A-Za-z0-9_]/g, '_');
const label = (t: GraphTransition): string => (t.guard === null ? t.event : `${t.event} [${t.guard}]`);
const children = (g: MachineGraph, parent: string | null): GraphState[] =>
  g.states.filter((s) => s.parent === parent);

/** Mermaid `stateDiagram-v2` text: nested states as composites, final states to `[*]`. */
export function toMermaid(g: MachineGraph): string {
  const lines = ['stateDiagram-v2'];
  const root = g.states.find((s) => s.parent === null);
  const emit = (s: GraphState, indent: string): void => {
    const kids = children(g, s.id);
    if (kids.length === 0) {
      lines.push(`${indent}state "${s.key}" as ${safeId(s.id)}`);
      if (s.type === 'final') lines.push(`${indent}${safeId(s.id)} --> [*]`);
      return;
    }
    lines.push(`${indent}state "${s.key}" as ${safeId(s.id)} {`);
    if (s.initial !== null) lines.push(`${indent}  [*] --> ${safeId(s.initial)}`);
    for (const k of kids) emit(k, `${indent}  `);
    lines.push(`${indent}}`);
  };
  if (root !== undefined) {
    if (root.initial !== null) lines.push(`  [*] --> ${safeId(root.initial)}`);
    for (const k of children(g, root.id)) emit(k, '  ');
  }
  for (const t of g.transitions) {
    // Mermaid has no node for the machine itself: its own transitions leave the initial state, marked.
    const fromRoot = t.source === root?.id;
    const source = fromRoot ? (root.initial ?? t.source) : t.source;
    const text = `${label(t)}${fromRoot ? ' (from any state)' : ''}`.replace(/:/g, ' ');
    lines.push(`  ${safeId(source)} --> ${safeId(t.target)} : ${text}`);
  }
  return `${lines.join('\n')}\n`;
}

const quote = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Graphviz DOT: compound states as clusters (edges to them end at the cluster's entry point). */
export function toDot(g: MachineGraph): string {
  const lines = [
    `digraph ${quote(g.machine)} {`,
    '  compound=true; rankdir=LR; node [shape=box, style=rounded, fontname="Helvetica"]; edge [fontname="Helvetica", fontsize=10];',
  ];
  const isCluster = (s: GraphState): boolean => children(g, s.id).length > 0;
  const anchor = (id: string): string => quote(`${id}#entry`);
  const byId = new Map(g.states.map((s) => [s.id, s]));
  const emit = (s: GraphState, indent: string): void => {
    if (!isCluster(s)) {
      lines.push(
        `${indent}${quote(s.id)} [label=${quote(s.key)}${s.type === 'final' ? ', peripheries=2' : ''}];`,
      );
      return;
    }
    lines.push(`${indent}subgraph ${quote(`cluster_${s.id}`)} {`, `${indent}  label=${quote(s.key)};`);
    lines.push(`${indent}  ${anchor(s.id)} [shape=point, width=0.1];`);
    for (const k of children(g, s.id)) emit(k, `${indent}  `);
    if (s.initial !== null) {
      const init = byId.get(s.initial);
      const head =
        init !== undefined && isCluster(init)
          ? `${anchor(init.id)} [lhead=${quote(`cluster_${init.id}`)}]`
          : quote(s.initial);
      lines.push(`${indent}  ${anchor(s.id)} -> ${head};`);
    }
    lines.push(`${indent}}`);
  };
  for (const s of g.states.filter((x) => x.parent === null)) emit(s, '  ');
  for (const t of g.transitions) {
    const src = byId.get(t.source);
    const dst = byId.get(t.target);
    const from = src !== undefined && isCluster(src) ? anchor(src.id) : quote(t.source);
    const to = dst !== undefined && isCluster(dst) ? anchor(dst.id) : quote(t.target);
    const attrs = [`label=${quote(label(t))}`];
    if (src !== undefined && isCluster(src)) attrs.push(`ltail=${quote(`cluster_${src.id}`)}`);
    if (dst !== undefined && isCluster(dst) && src?.id !== dst.id)
      attrs.push(`lhead=${quote(`cluster_${dst.id}`)}`);
    lines.push(`  ${from} -> ${to} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** SVG rendered from the DOT text by Graphviz compiled to WebAssembly (no native install). */
export async function toSvg(g: MachineGraph): Promise<string> {
  const { instance } = await import('@viz-js/viz');
  const viz = await instance();
  return viz.renderString(toDot(g), { format: 'svg' });
}

/** The graph in one of the formats. */
export async function renderGraph(g: MachineGraph, format: VizFormat): Promise<string> {
  switch (format) {
    case 'mermaid':
      return toMermaid(g);
    case 'dot':
      return toDot(g);
    case 'svg':
      return toSvg(g);
    case 'json':
      return `${JSON.stringify(g, null, 2)}\n`;
  }
}
