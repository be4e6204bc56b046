import { graphOf, MACHINES } from './machines.ts';
import { toMermaid, toSvg } from './render.ts';

/** The committed diagrams under `docs/machines/`: file name → content, for every machine. */
export async function machineDocs(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(MACHINES)) {
    const graph = graphOf(name);
    if (graph === null) continue;
    out[`${name}.mmd`] = toMermaid(graph);
    out[`${name}.svg`] = await toSvg(graph);
  }
  return out;
}
