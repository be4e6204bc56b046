import { McpServer } from '@modelcontextprotocol/server';
import { GetRunInput, ListInboxInput, RunTaskInput } from './schemas.ts';
import { McpSurfaceError, type McpSurface } from './service.ts';

/** The tools the MCP surface offers, and only these: none decides an approval or changes authority. */
export const MCP_TOOLS = ['run_task', 'get_run', 'list_inbox'] as const;

type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

function ok(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** A request the surface refuses (an unknown agent or run): a tool error naming the input, never a crash. */
async function guarded(work: () => Promise<Record<string, unknown>> | Record<string, unknown>) {
  try {
    return ok(await work());
  } catch (err) {
    if (!(err instanceof McpSurfaceError)) throw err;
    return {
      content: [{ type: 'text' as const, text: `${err.code}: ${err.message}` }],
      structuredContent: { error: { code: err.code, message: err.message } },
      isError: true,
    };
  }
}

/**
 * An MCP server over the surface: `run_task`, `get_run`, `list_inbox`. Inputs are validated by
 * their zod schemas before a handler runs (bad input is an MCP error, the server goes on).
 */
export function createMcpServer(surface: McpSurface, version: string): McpServer {
  const server = new McpServer(
    { name: 'snotra', version },
    {
      capabilities: { tools: {} },
      instructions:
        'Snotra runs local agents under its policy. run_task starts an unattended run; a call that needs a ' +
        'human parks in the Snotra Inbox and is decided by the user with `snotra inbox approve|deny` ' +
        '(no tool here can decide it). Poll get_run for the outcome.',
    },
  );
  server.registerTool(
    'run_task',
    {
      title: 'Run a task',
      description:
        `Starts an unattended run of a Snotra agent (agents: ${surface.agents().join(', ')}). Returns the run id, ` +
        'and the answer when the run finishes within the wait. A call that needs approval parks in the Inbox ' +
        'for the human; the run resumes after their decision.',
      inputSchema: RunTaskInput,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true, idempotentHint: false },
    },
    async ({ agent, text, waitMs, session }) => guarded(() => surface.runTask(agent, text, waitMs, session)),
  );
  server.registerTool(
    'get_run',
    {
      title: 'Get a run',
      description:
        'The status and outcome of a run started with run_task, and its pending approvals (id and tool).',
      inputSchema: GetRunInput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ runId }) => guarded(() => surface.getRun(runId)),
  );
  server.registerTool(
    'list_inbox',
    {
      title: 'List the Inbox',
      description:
        'The approvals that runs started through MCP wait for (read-only: the human decides them in Snotra).',
      inputSchema: ListInboxInput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => guarded(() => ({ approvals: surface.listInbox() })),
  );
  return server;
}
