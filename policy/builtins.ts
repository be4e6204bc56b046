import { z } from 'zod';
import { checkGitArgs, GIT_QUERY_SUBCOMMANDS } from './git-query-args.ts';
import type { ToolSecurityMetadata } from './metadata.ts';

/** A vetted built-in tool: its security metadata and the schema of its arguments. */
export interface BuiltinTool {
  readonly metadata: ToolSecurityMetadata;
  readonly args: z.ZodType<Record<string, unknown>>;
}

const path = z.string().min(1).max(4096);

/**
 * The built-in tools of DESIGN.md §12. Names and metadata are the contract; the argument
 * schemas are strict, so an unexpected argument is `invalid_arguments`, never ignored.
 */
export const BUILTIN_TOOLS = {
  read_file: {
    metadata: {
      risk: 'read',
      pathArguments: ['path'],
      approvalDefault: 'allow',
      source: 'builtin',
      parallelSafe: true,
      idempotent: true,
    },
    args: z.strictObject({ path, startLine: z.int().min(1).optional(), endLine: z.int().min(1).optional() }),
  },
  list_dir: {
    metadata: {
      risk: 'read',
      pathArguments: ['path'],
      approvalDefault: 'allow',
      source: 'builtin',
      parallelSafe: true,
      idempotent: true,
    },
    args: z.strictObject({ path }),
  },
  search_files: {
    metadata: {
      risk: 'read',
      pathArguments: ['path'],
      approvalDefault: 'allow',
      source: 'builtin',
      parallelSafe: true,
      idempotent: true,
    },
    args: z.strictObject({ path, pattern: z.string().min(1).max(1000) }),
  },
  write_file: {
    metadata: {
      risk: 'write-local',
      pathArguments: ['path'],
      approvalDefault: 'allow',
      source: 'builtin',
      idempotent: true,
    },
    args: z.strictObject({ path, content: z.string() }),
  },
  edit_file: {
    metadata: { risk: 'write-local', pathArguments: ['path'], approvalDefault: 'allow', source: 'builtin' },
    args: z.strictObject({ path, old: z.string(), new: z.string() }),
  },
  shell: {
    metadata: { risk: 'exec', pathArguments: ['cwd'], approvalDefault: 'allow', source: 'builtin' },
    args: z.strictObject({ command: z.string().min(1).max(100_000), cwd: path.optional() }),
  },
  git_query: {
    metadata: {
      risk: 'read',
      approvalDefault: 'allow',
      source: 'builtin',
      parallelSafe: true,
      idempotent: true,
    },
    args: z.strictObject({
      args: z
        .array(z.string().max(4096))
        .min(1)
        .refine((a) => checkGitArgs(a) === null, {
          error: (issue) => {
            const verdict = checkGitArgs(issue.input as string[]);
            return verdict?.code === 'git_option_refused'
              ? verdict.message
              : `the first argument must be one of ${GIT_QUERY_SUBCOMMANDS.join(', ')}`;
          },
        }),
    }),
  },
  http_request: {
    metadata: { risk: 'external', targetArgument: 'url', approvalDefault: 'allow', source: 'builtin' },
    args: z.strictObject({
      url: z.string().min(1).max(8192),
      method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']),
      body: z.string().optional(),
      headers: z.record(z.string(), z.string()).optional(),
      idempotencyKey: z.string().optional(),
    }),
  },
  send_message: {
    metadata: { risk: 'external', targetArgument: 'channel', approvalDefault: 'allow', source: 'builtin' },
    args: z.strictObject({ channel: z.string().min(1).max(512), text: z.string().max(100_000) }),
  },
  spawn_agent: {
    // Idempotent: a retried call finds its child run (the id derives from the call) instead of starting another.
    metadata: { risk: 'read', approvalDefault: 'allow', source: 'builtin', idempotent: true },
    args: z.strictObject({
      profile: z.string().min(1),
      task: z.string().min(1),
      tools: z.array(z.string()).optional(),
      roots: z.array(z.strictObject({ path, access: z.enum(['read', 'read-write']).optional() })).optional(),
      mode: z.enum(['allow', 'ask', 'deny']).optional(),
    }),
  },
  request_directory_access: {
    metadata: {
      risk: 'write-local',
      pathArguments: ['path'],
      pathScope: 'sensitive-only',
      approvalDefault: 'ask',
      alwaysAsk: true,
      source: 'builtin',
    },
    args: z.strictObject({ path, access: z.enum(['read', 'read-write']) }),
  },
} as const satisfies Record<string, BuiltinTool>;

/** Names of the built-in tools. */
export type BuiltinToolName = keyof typeof BUILTIN_TOOLS;

/** Whether `name` is a built-in tool. */
export function isBuiltinTool(name: string): name is BuiltinToolName {
  return Object.hasOwn(BUILTIN_TOOLS, name);
}
