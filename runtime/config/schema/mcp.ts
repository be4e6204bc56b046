import { z } from 'zod';
import { McpAnnotations } from '../../../policy/mcp.ts';
import { PathText, SecretRef } from './common.ts';

/** A tool name of an MCP server in a filter: exact, or a prefix ending in `*`. */
const McpToolPattern = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^*]*\*?$/, 'a tool name, or a prefix ending in "*" (no other "*")');

const McpServer = z.strictObject({
  command: PathText.describe(
    'The program that starts the server (stdio transport), e.g. "npx" or "/usr/local/bin/notes-mcp".',
  ),
  args: z.array(z.string()).default([]).describe('Its arguments (default: none).'),
  env: z
    .record(z.string(), z.union([z.string(), SecretRef]))
    .default({})
    .describe('Environment variables of the server; a value is a string or a secret reference.'),
  /**
   * Which of the server's tools the agents see (`include`, `exclude`), and tools the server is
   * known to offer with the annotations it reports (untrusted hints) — for `snotra policy check`
   * before the server has been started. Once the server lists its tools, its live listing
   * replaces what is declared here.
   */
  tools: z
    .object({
      include: z
        .array(McpToolPattern)
        .optional()
        .describe(
          'Only these tools of the server are offered (exact names, or a prefix ending in "*"); default: every tool it lists.',
        ),
      exclude: z
        .array(McpToolPattern)
        .optional()
        .describe(
          'Tools of the server never offered (exact names, or a prefix ending in "*"); wins over include.',
        ),
    })
    .catchall(
      z
        .strictObject({
          annotations: McpAnnotations.optional().describe(
            'The annotations the server reports (untrusted hints: they can only make the tool stricter).',
          ),
        })
        .describe('One tool the server is known to offer.'),
    )
    .default({})
    .describe(
      'The tool filter ("include", "exclude") and tools the server is known to offer, by name. Each tool is "external" + "ask" unless tools["mcp:<server>:<tool>"] overrides it.',
    ),
  timeoutMs: z
    .int()
    .positive()
    .max(3_600_000)
    .optional()
    .describe(
      'Longest one tool call may take, in ms (default 60000); then the call is cancelled (notifications/cancelled).',
    ),
  network: z
    .boolean()
    .default(true)
    .describe(
      "Whether the server's sandbox has the network (default true: MCP tools are external; false for local-only servers).",
    ),
});

/** The `mcp` section: the MCP servers whose tools the agents may call. */
export const McpSection = z
  .strictObject({
    servers: z
      .record(
        z.string().regex(/^[A-Za-z0-9_-]+$/),
        McpServer.describe('One MCP server, started as a child process.'),
      )
      .default({})
      .describe('MCP servers by id (letters, digits, "_" and "-"); their tools are named "mcp:<id>:<tool>".'),
  })
  .default({ servers: {} })
  .describe('Model Context Protocol servers whose tools the agents may call.');
