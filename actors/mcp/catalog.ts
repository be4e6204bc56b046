/**
 * Reading a server's tool catalog: `tools/list` page by page within bounds (pages, tools, schema
 * size), a repeated cursor stops the walk, each tool checked (name, schema compiles) and hashed.
 */
import { McpAnnotations, mcpToolFiltered } from '../../policy/mcp.ts';
import type { McpLimits } from './limits.ts';
import { compileArgumentCheck, McpSchemaError, toolDigest } from './schema.ts';
import type { ListedTool, McpServerSpec } from './types.ts';

/** MCP tool names: 1–128 of `A-Z a-z 0-9 _ - . /` (no `:`, which separates our namespace). */
const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;

/** Requests one `tools/list` page. */
export type PageRequest = (cursor: string | undefined) => Promise<unknown>;

/** A listing: the tools kept and what was dropped or cut short, in words safe to show. */
export interface Listing {
  readonly tools: readonly ListedTool[];
  readonly problems: readonly string[];
}

function describeName(name: unknown, redact: (text: string) => string): string {
  // Redacted before it is cut: a secret cut in two would not be found afterwards.
  return typeof name === 'string' ? JSON.stringify(redact(name).slice(0, 64)) : `(a ${typeof name})`;
}

/** Reads the whole catalog within `limits`. Rejects only when a page request fails. */
export async function readCatalog(
  requestPage: PageRequest,
  spec: Pick<McpServerSpec, 'filter'>,
  limits: McpLimits,
  redact: (text: string) => string = (text) => text,
): Promise<Listing> {
  const tools: ListedTool[] = [];
  const names = new Set<string>();
  const problems: string[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= limits.maxPages) {
      problems.push(`the listing was cut after ${limits.maxPages} pages`);
      break;
    }
    const raw = (await requestPage(cursor)) as { tools?: unknown; nextCursor?: unknown } | null;
    const entries = Array.isArray(raw?.tools) ? raw.tools : [];
    for (const entry of entries) {
      if (tools.length >= limits.maxTools) {
        problems.push(`more than ${limits.maxTools} tools: the rest were dropped`);
        return { tools, problems };
      }
      const t = (entry ?? {}) as Record<string, unknown>;
      if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) {
        problems.push(`tool ${describeName(t.name, redact)} dropped: not a valid MCP tool name`);
        continue;
      }
      if (names.has(t.name)) {
        problems.push(`tool ${describeName(t.name, redact)} dropped: listed twice`);
        continue;
      }
      let check: ListedTool['check'];
      try {
        check = compileArgumentCheck(t.inputSchema, limits);
      } catch (error) {
        const why = error instanceof McpSchemaError ? error.message : 'its inputSchema does not compile';
        problems.push(`tool ${describeName(t.name, redact)} dropped: ${why}`);
        continue;
      }
      // Unreadable hints are no hints: the worst case.
      const parsed = McpAnnotations.safeParse(t.annotations ?? {});
      const annotations = parsed.success ? parsed.data : {};
      names.add(t.name);
      tools.push({
        name: t.name,
        annotations,
        inputSchema: t.inputSchema as Record<string, unknown>,
        digest: toolDigest({ name: t.name, inputSchema: t.inputSchema, annotations }),
        check,
        filteredOut: mcpToolFiltered(spec.filter, t.name),
      });
    }
    const next = raw?.nextCursor;
    if (typeof next !== 'string' || next === '') break;
    if (cursors.has(next)) {
      problems.push('the server repeated a page cursor: the listing stopped there');
      break;
    }
    cursors.add(next);
    cursor = next;
  }
  return { tools, problems };
}
