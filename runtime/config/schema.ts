import { z } from 'zod';
import { McpAnnotations } from '../../policy/mcp.ts';
import { PathRuleInput } from '../../policy/paths/index.ts';
import { Interaction, Mode, RootAccess } from '../../policy/risk.ts';
import { ToolRule } from '../../policy/rules.ts';

function isControl(ch: string): boolean {
  const c = ch.codePointAt(0) ?? 0;
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029;
}

/** Whether a path holds NUL or another control character (C0, DEL, C1, line/paragraph separators). */
export function hasControlChars(path: string): boolean {
  return [...path].some(isControl);
}

/** A file system path: never empty, never with NUL or other control characters. */
export const PathText = z
  .string()
  .min(1)
  .refine((p) => !hasControlChars(p), {
    message: 'a path must not contain NUL or other control characters',
  });

/** A reference to a secret by name; the value lives in the secret store, never in config. */
export const SecretRef = z
  .strictObject({
    secret: z
      .string()
      .min(1)
      .describe('The name of a secret in the secret store (see `secrets.backend`), e.g. "openai".'),
  })
  .describe('A reference to a secret by name: `{ "secret": "<name>" }`; the value never appears in config.');

/** A free-text note for people reading the config; ignored by the runtime. */
const Comment = z
  .string()
  .optional()
  .describe('A note for people reading this file (JSON has no comments); ignored by the runtime.');

const Root = z.strictObject({
  $comment: Comment,
  id: z.string().min(1).describe('A stable name of this root, e.g. "workspace" or "docs".'),
  path: PathText.describe(
    'The folder, relative to this config file\'s folder; "~" and "~/..." name the home folder. Example: ".".',
  ),
  access: RootAccess.describe('What tools may do inside: "read" or "read-write".'),
  primary: z
    .boolean()
    .optional()
    .describe(
      'The root relative tool paths resolve against (default: the first root; a single root is always primary).',
    ),
  source: z
    .enum(['workspace', 'user-grant', 'task'])
    .optional()
    .describe('Why the root exists: "workspace" (default), "user-grant" or "task".'),
  deny: z
    .array(PathText)
    .optional()
    .describe(
      'Paths inside this root that no tool may touch, relative to the root, e.g. ["secrets", ".env"].',
    ),
});

const Budget = z.strictObject({
  modelCalls: z.int().positive().optional().describe('Most model calls one run may make (default 50).'),
  toolCalls: z.int().positive().optional().describe('Most tool calls one run may make (default 100).'),
  wallTimeMs: z
    .int()
    .positive()
    .optional()
    .describe('Longest a run may take, in ms (default 600000: ten minutes).'),
});

const Model = z.strictObject({
  provider: z
    .enum(['scripted', 'openai-compatible', 'anthropic'])
    .describe(
      'Which model API to use: "openai-compatible", "anthropic", or "scripted" (replays a file of steps; for tests and demos).',
    ),
  /** For `scripted`: a JSON file of steps, relative to the config's folder. */
  script: PathText.optional().describe(
    'For "scripted": a JSON file of steps, relative to this config file\'s folder.',
  ),
  /** The API root (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com/v1`). */
  baseUrl: z
    .string()
    .optional()
    .describe(
      'The API root, e.g. "https://api.openai.com/v1", "http://127.0.0.1:11434/v1" or "https://api.anthropic.com/v1".',
    ),
  model: z.string().min(1).optional().describe('The model name the API expects, e.g. "gpt-4o-mini".'),
  apiKey: SecretRef.optional().describe('The API key, as a secret reference: { "secret": "openai" }.'),
  /** Extra request headers; a value may be a secret reference. */
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.union([z.string(), SecretRef]))
    .optional()
    .describe('Extra request headers by name; a value is a string or a secret reference.'),
  /** Longest silence before the answer starts or between two streamed chunks, in ms. */
  timeoutMs: z
    .int()
    .positive()
    .max(3_600_000)
    .optional()
    .describe(
      'Longest silence before the answer starts or between two streamed chunks, in ms (at most one hour).',
    ),
  /** Retries before the first streamed byte (connection errors, 408, 409, 429, 5xx). */
  maxRetries: z
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe('Retries before the first streamed byte (connection errors, 408, 409, 429, 5xx); 0 to 10.'),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe("Sampling temperature, 0 to 2 (default: the API's)."),
  /** Output token limit of one step (Anthropic requires one: default 4096). */
  maxTokens: z
    .int()
    .positive()
    .optional()
    .describe('Output token limit of one model step (for "anthropic" the default is 4096).'),
});

const Agent = z.strictObject({
  $comment: Comment,
  mode: Mode.default('ask').describe(
    'The permission mode: "ask" (default: side effects need approval), "allow" (the policy still applies rules, roots and hard lines) or "deny" (every call is denied).',
  ),
  tools: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'The tools this agent may see, by name, e.g. ["read_file", "list_dir"] (default: every tool of this config).',
    ),
  rules: z
    .array(ToolRule)
    .default([])
    .describe(
      'Rules that can only ask or deny, never allow, e.g. { "id": "no-push", "command": "git push", "effect": "deny" }.',
    ),
  model: Model.optional().describe('The model this agent talks to (`snotra run` needs one).'),
  budget: Budget.optional().describe('Limits of one run of this agent.'),
  interaction: Interaction.optional().describe(
    'Whether runs have a human at hand ("attended") or park approvals in the Inbox ("unattended").',
  ),
});

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

const Scheduled = z.strictObject({
  id: z.string().min(1).describe('A stable name of this schedule, e.g. "daily-report".'),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that runs it.'),
  cron: z
    .string()
    .min(1)
    .describe(
      'When it fires: a cron pattern "minute hour day-of-month month day-of-week" (5 to 7 fields, croner), e.g. "0 9 * * 1-5" for 09:00 on weekdays, or an ISO date-time such as "2026-12-24T09:00:00Z" for a one-shot task.',
    )
    // An editor hint only (5 to 7 fields, a nickname such as "@daily" or an ISO date-time); croner checks the
    // pattern itself when the config loads (validate.ts), with the precise error.
    .meta({
      pattern: '^\\s*(@[a-z]+|\\S+(\\s+\\S+){4,6}|\\d{4}-\\d{2}-\\d{2}T\\S+)\\s*$',
      examples: ['0 9 * * 1-5', '*/15 * * * *', '@daily', '2026-12-24T09:00:00Z'],
    }),
  message: z.string().describe('The task message the agent receives at each firing.'),
  /** Firings missed while the runtime was down: recorded as skipped (default) or run once. */
  missed: z
    .enum(['skip', 'run-once'])
    .default('skip')
    .describe('Firings missed while the runtime was down: recorded as "skip"ped (default) or "run-once".'),
  /** With `run-once`: how old the newest missed firing may be and still run (ms, default 1 h). */
  catchUpWindowMs: z
    .int()
    .positive()
    .optional()
    .describe(
      'With "run-once": how old the newest missed firing may be and still run, in ms (default one hour).',
    ),
});

/** A goal's budget over all of its iterations; each unset limit is not capped at the goal level. */
const GoalBudget = z.strictObject({
  modelCalls: z
    .int()
    .positive()
    .optional()
    .describe(
      'Most model calls all iterations of the goal may make together (each run is capped to what is left).',
    ),
  toolCalls: z
    .int()
    .positive()
    .optional()
    .describe(
      'Most tool calls all iterations of the goal may make together (each run is capped to what is left).',
    ),
  wallTimeMs: z
    .int()
    .positive()
    .optional()
    .describe(
      'Longest the iterations of the goal may run together, in ms (time spent paused or between iterations does not count).',
    ),
});

/** One goal loop (`surfaces.goalLoops[]`): an objective an agent works on, one unattended run per iteration. */
const GoalLoop = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .describe(
      'A stable name of this goal (letters, digits, ".", "_" and "-"; at most 64), e.g. "fix-tests".',
    ),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that works on the goal.'),
  objective: z
    .string()
    .min(1)
    .max(20_000)
    .describe(
      'What the agent should achieve; each iteration starts a run with this objective as its message.',
    ),
  maxIterations: z
    .int()
    .positive()
    .max(10_000)
    .default(10)
    .describe('Most iterations (runs) before the goal stops as "budget_limited" (default 10).'),
  budget: GoalBudget.optional().describe(
    'Limits over all iterations together; when one is reached the goal stops as "budget_limited".',
  ),
});

/** A Telegram bot (Bot API, long polling): `surfaces.platforms[]` with `kind: "telegram"`. */
const TelegramPlatform = z.strictObject({
  $comment: Comment,
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" and "-" (1 to 64)')
    .describe('A stable name of this connection, e.g. "telegram"; used by `snotra platforms pair ID CODE`.'),
  kind: z.literal('telegram').describe('The platform: "telegram" (the Telegram Bot API).'),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that answers messages of paired chats.'),
  token: SecretRef.describe(
    'The bot token from @BotFather, as a secret reference: { "secret": "telegram-bot" }. It is part of every Bot API URL, so it is never logged.',
  ),
  apiBase: z
    .string()
    .optional()
    .describe(
      'The Bot API root (default "https://api.telegram.org"); set it for a self-hosted Bot API server or a test server. http:// only for loopback.',
    ),
  allowedChats: z
    .array(z.int().refine((n) => Number.isSafeInteger(n), 'a Telegram chat id'))
    .optional()
    .describe(
      'The only chat ids that may pair at all, e.g. [123456789]; messages from any other chat get no answer (default: any private chat may ask to pair).',
    ),
  maxTurnsPerMessage: z
    .int()
    .positive()
    .max(50)
    .optional()
    .describe(
      "Most model turns one message may cost (the run's model-call budget, default 8; never above the agent's own budget).",
    ),
});

/** One messaging platform connection, by `kind` (only "telegram" so far). */
const Platform = z
  .discriminatedUnion('kind', [TelegramPlatform])
  .describe('One messaging platform connection, chosen by "kind".');
export type PlatformConfig = z.infer<typeof Platform>;

const SensitiveEntry = PathRuleInput.extend({
  kind: z
    .enum(['sensitive', 'never-writable'])
    .describe(
      '"sensitive" (every read and write is denied, and the sandbox hides the path) or "never-writable" (may be read, never written).',
    ),
});

/**
 * One entry under `tools`: security metadata of an extension or skill tool, or the user's local
 * override of an MCP tool (`mcp:<server>:<tool>`). Deliberately any object here: the tool
 * registry validates it (runtime/policy/registry-from-config.ts), and a tool whose metadata is
 * missing or invalid is registered as unannotated or invalid — every call needs a human — rather
 * than failing the whole config. The JSON Schema describes the expected shape (json-schema.ts).
 */
export const ToolEntry = z.record(z.string(), z.unknown());

/**
 * The shape of `snotra.config.json` (DESIGN.md §12). Strict: an unknown key is an error, so a
 * misspelt restriction is never silently ignored.
 */
export const ConfigSchema = z.strictObject({
  $schema: z
    .string()
    .optional()
    .describe(
      'The JSON Schema of this file, for editor help, e.g. "./node_modules/snotra-runtime/schema/snotra.config.schema.json".',
    ),
  $comment: Comment,
  /** Default: outside the workspace, `$XDG_STATE_HOME/snotra/<name>-<hash>` (see `defaultStateDir`). */
  stateDir: PathText.optional().describe(
    'Where the runtime keeps its database, logs and socket. Default: outside the workspace, $XDG_STATE_HOME/snotra/<folder>-<hash> (~/.local/state/snotra/...), so a command that wipes the workspace cannot reach it.',
  ),
  workspace: z
    .strictObject({
      roots: z
        .array(Root)
        .min(1)
        .describe('The folders tools may use (at least one); everything outside them is out of reach.'),
    })
    .default({ roots: [{ id: 'workspace', path: '.', access: 'read-write', primary: true }] })
    .describe("The folders the agents work in. Default: this config's folder, read-write."),
  agents: z
    .record(
      z.string().regex(/^[A-Za-z0-9_-]+$/),
      Agent.describe('One agent: its mode, rules, model and limits.'),
    )
    .default({ assistant: { mode: 'ask', rules: [] } })
    .describe(
      'The agents by id (letters, digits, "_" and "-"). Default: one agent "assistant" in mode "ask".',
    ),
  /** Security metadata of extension/skill tools, and the user's local overrides for MCP tools. */
  tools: z
    .record(z.string().min(1), ToolEntry)
    .default({})
    .describe(
      'Security metadata of extension and skill tools by name, and local overrides of MCP tools as "mcp:<server>:<tool>". A tool declared with only "source", or with metadata that does not validate, needs approval for every call.',
    ),
  mcp: z
    .strictObject({
      servers: z
        .record(
          z.string().regex(/^[A-Za-z0-9_-]+$/),
          McpServer.describe('One MCP server, started as a child process.'),
        )
        .default({})
        .describe(
          'MCP servers by id (letters, digits, "_" and "-"); their tools are named "mcp:<id>:<tool>".',
        ),
    })
    .default({ servers: {} })
    .describe('Model Context Protocol servers whose tools the agents may call.'),
  surfaces: z
    .strictObject({
      chat: z
        .strictObject({
          agent: z.string().min(1).optional().describe('The agent chat messages go to (a key of `agents`).'),
        })
        .optional()
        .describe('The chat surface.'),
      scheduled: z
        .array(Scheduled.describe('One scheduled task.'))
        .default([])
        .describe('Tasks started on a cron schedule; unattended (approvals park in the Inbox).'),
      goalLoops: z
        .array(GoalLoop.describe('One goal loop.'))
        .default([])
        .describe(
          'Goals an agent works on over several unattended runs (surface "goal"), started and controlled with `snotra goal`.',
        ),
      platforms: z
        .array(Platform)
        .default([])
        .describe(
          "Messaging platform connections: each paired chat's messages become unattended runs, answered in the chat.",
        ),
    })
    .default({ scheduled: [], goalLoops: [], platforms: [] })
    .describe('Where tasks come from besides the CLI: chat, schedules, messaging platforms.'),
  sidecar: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe('false: `snotra start` runs no sidecar (the ready line says "sidecar": null).'),
      port: z
        .int()
        .min(0)
        .max(65535)
        .default(0)
        .describe('The loopback port of the sidecar API (default 0: any free port).'),
      allowedOrigins: z
        .array(z.string())
        .default([])
        .describe(
          'Browser origins allowed to call the sidecar, e.g. ["http://localhost:5173"] (default: none).',
        ),
      limits: z
        .strictObject({
          bodyBytes: z.int().positive().optional().describe('Largest HTTP request body, in bytes.'),
          frameBytes: z.int().positive().optional().describe('Largest WebSocket frame, in bytes.'),
          connections: z.int().positive().optional().describe('Most open connections at once.'),
          requestsPerMinute: z.int().positive().optional().describe('Most requests per minute.'),
        })
        .optional()
        .describe('Size and rate limits of the sidecar (defaults are built in).'),
    })
    .default({ enabled: true, port: 0, allowedOrigins: [] })
    .describe('The local HTTP/WebSocket API for apps embedding the runtime.'),
  bus: z
    .strictObject({
      url: z
        .string()
        .optional()
        .describe(
          'A NATS server to use, e.g. "nats://127.0.0.1:4222" (default: the runtime starts its own).',
        ),
      credentials: SecretRef.optional().describe('Credentials of that server, as a secret reference.'),
      auth: z
        .enum(['token', 'per-actor'])
        .optional()
        .describe(
          'How connections authenticate: "token" (default; the embedded server\'s per-launch token, or bus.credentials) or "per-actor" (each agent actor gets its own NATS JWT whose permissions are only its own subjects; approval decisions only from the gateway).',
        ),
      signingKey: SecretRef.optional().describe(
        'With bus.url and bus.auth "per-actor": the account signing key (an nkey seed, "SA…") the runtime mints credentials with, as a secret reference.',
      ),
      account: z
        .string()
        .regex(/^A[A-Z2-7]{55}$/, 'an account public nkey ("A" and 55 base32 characters)')
        .optional()
        .describe(
          'With bus.url and bus.auth "per-actor": the public key of the account the signing key belongs to.',
        ),
    })
    .default({})
    .describe('The NATS message bus the actors talk over.'),
  /** Cluster mode (docs/cluster.md): set `node.id` and `bus.url` to share runs with other nodes. */
  node: z
    .strictObject({
      id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, '1-64 letters, digits, "_" or "-"')
        .describe('This runtime node\'s id in a cluster, unique per node, e.g. "node-a". Needs bus.url.'),
      leaseTtlMs: z
        .int()
        .min(500)
        .max(600_000)
        .optional()
        .describe('A node not heard from for this long counts as dead and its runs move (default 10000).'),
      resumeAckWaitMs: z
        .int()
        .min(500)
        .max(600_000)
        .optional()
        .describe('A resume held this long without a heartbeat goes to another node (default 30000).'),
    })
    .optional()
    .describe('Cluster mode: this runtime as one node of several on a NATS JetStream cluster.'),
  /** Where secrets named in config are read (`os` keyring by default; `env`: `SNOTRA_SECRET_<NAME>`). */
  secrets: z
    .strictObject({
      backend: z
        .enum(['os', 'env', 'memory'])
        .default('os')
        .describe(
          '"os" (the OS keyring, default), "env" (SNOTRA_SECRET_<NAME> variables) or "memory" (tests).',
        ),
    })
    .default({ backend: 'os' })
    .describe('Where secrets named in config are read.'),
  /**
   * `http_request` limits. Private, loopback and link-local targets are refused; `allowPrivateHosts`
   * lists exact `host:port` pairs that may be reached anyway (a local service you run yourself).
   */
  http: z
    .strictObject({
      allowPrivateHosts: z
        .array(
          z
            .string()
            .regex(
              /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
              'a host:port pair such as "127.0.0.1:8080"',
            ),
        )
        .default([])
        .describe(
          'Exact host:port pairs on private, loopback or link-local addresses that may be reached anyway, e.g. ["127.0.0.1:8080"].',
        ),
    })
    .default({ allowPrivateHosts: [] })
    .describe('Limits of the http_request tool; private, loopback and link-local targets are refused.'),
  /** How long an approval stays open before it expires (ms); default one day. */
  approvals: z
    .strictObject({
      ttlMs: z
        .int()
        .positive()
        .optional()
        .describe('How long an approval stays open before it expires, in ms (default one day).'),
    })
    .default({})
    .describe('Approval requests.'),
  /** Extra sensitive or never-writable paths: config can only make the built-in list stricter. */
  sensitivePaths: z
    .array(SensitiveEntry.describe('One extra sensitive-path rule.'))
    .default([])
    .describe(
      'Extra sensitive or never-writable paths; config can only add to the built-in list, never remove.',
    ),
});
/** A loaded config: paths absolute, the state dir resolved (configured or default). */
export type Config = Omit<z.infer<typeof ConfigSchema>, 'stateDir'> & { stateDir: string };
export type AgentConfig = z.infer<typeof Agent>;
/** One goal loop of the config, defaults applied. */
export type GoalLoopConfig = z.infer<typeof GoalLoop>;
