import { z } from 'zod';

/** The surface name recorded with every run the MCP surface starts. */
export const MCP_SURFACE = 'mcp';

/** The longest `waitMs` a `run_task` call may ask for, unless `snotra mcp --wait-ms` sets a lower cap. */
export const MAX_WAIT_MS = 600_000;

/** `run_task` input: an agent of the config and the message it gets. */
export const RunTaskInput = z.strictObject({
  agent: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/, 'an agent id: letters, digits, "_" and "-"')
    .describe('The agent (a key of `agents` in the Snotra config) that runs the task.'),
  text: z.string().min(1).max(100_000).describe('What the agent is asked to do.'),
  waitMs: z
    .int()
    .min(0)
    .max(MAX_WAIT_MS)
    .optional()
    .describe(
      'How long this call waits for the answer, in ms (default and upper bound: the server’s --wait-ms). ' +
        'The run goes on after the call returns; ask get_run later.',
    ),
  session: z
    .string()
    .min(1)
    .max(200)
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f]+$/, 'a session name without control characters')
    .optional()
    .describe(
      'A conversation to continue (or begin): the run starts with its history and adds to it. ' +
        'Without it the run stands on its own. One run at a time per session.',
    ),
});
export type RunTaskInput = z.infer<typeof RunTaskInput>;

/** `get_run` input. */
export const GetRunInput = z.strictObject({
  runId: z.string().min(1).max(512).describe('A run id returned by run_task.'),
});
export type GetRunInput = z.infer<typeof GetRunInput>;

/** `list_inbox` takes no input. */
export const ListInboxInput = z.strictObject({});

/** A pending approval as the MCP surface shows it: which request waits, never its arguments. */
export const PendingView = z.object({
  id: z.string(),
  tool: z.string(),
});
export type PendingView = z.infer<typeof PendingView>;

/** A run as `run_task` and `get_run` return it. */
export const RunView = z.object({
  runId: z.string(),
  agent: z.string(),
  status: z.string(),
  outcome: z.object({ status: z.string(), reason: z.string(), text: z.string().optional() }).nullable(),
  pendingApprovals: z.array(PendingView),
});
export type RunView = z.infer<typeof RunView>;

/** One Inbox entry as `list_inbox` returns it. */
export const InboxEntryView = z.object({
  id: z.string(),
  runId: z.string().nullable(),
  agent: z.string(),
  tool: z.string(),
  risk: z.string(),
  reason: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
});
export type InboxEntryView = z.infer<typeof InboxEntryView>;
