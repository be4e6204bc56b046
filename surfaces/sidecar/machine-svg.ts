import type { IncomingMessage, ServerResponse } from 'node:http';
import { graphOf, renderGraph } from '../../runtime/index.ts';
import { SidecarError } from './errors.ts';
import { reply, type RouteContext } from './route-context.ts';

/** Each machine's SVG, rendered once per process (the graphs are fixed by the code). */
const rendered = new Map<string, Promise<string>>();

/**
 * `GET /v1/machines/:name/svg`: `{ machine, svg }`, the diagram `snotra viz NAME --format svg`
 * draws (Graphviz in WebAssembly). Each state is the `<g>` whose `<title>` is its id
 * (`run.waiting_for_approval`); a compound state is the cluster titled `cluster_<id>`.
 */
export async function machineSvg(
  ctx: RouteContext,
  _req: IncomingMessage,
  res: ServerResponse,
  [name]: string[],
): Promise<void> {
  const graph = graphOf(name as string);
  if (graph === null) throw new SidecarError(404, 'unknown_machine', 'no machine by that name');
  let svg = rendered.get(graph.machine);
  if (svg === undefined) {
    svg = renderGraph(graph, 'svg');
    rendered.set(graph.machine, svg);
    svg.catch(() => rendered.delete(graph.machine));
  }
  reply(ctx, res, 200, { machine: graph.machine, svg: await svg });
}
