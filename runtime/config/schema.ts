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
export const SecretRef = z.strictObject({ secret: z.string().min(1) });

const Root = z.strictObject({
  id: z.string().min(1),
  path: PathText,
  access: RootAccess,
  primary: z.boolean().optional(),
  source: z.enum(['workspace', 'user-grant', 'task']).optional(),
  deny: z.array(PathText).optional(),
});

const Budget = z.strictObject({
  modelCalls: z.int().positive().optional(),
  toolCalls: z.int().positive().optional(),
  wallTimeMs: z.int().positive().optional(),
});

const Model = z.strictObject({
  provider: z.enum(['scripted', 'openai-compatible', 'anthropic']),
  /** For `scripted`: a JSON file of steps, relative to the config's folder. */
  script: PathText.optional(),
  /** The API root (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com/v1`). */
  baseUrl: z.string().optional(),
  model: z.string().min(1).optional(),
  apiKey: SecretRef.optional(),
  /** Extra request headers; a value may be a secret reference. */
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/), z.union([z.string(), SecretRef]))
    .optional(),
  /** Longest silence before the answer starts or between two streamed chunks, in ms. */
  timeoutMs: z.int().positive().max(3_600_000).optional(),
  /** Retries before the first streamed byte (connection errors, 408, 409, 429, 5xx). */
  maxRetries: z.int().min(0).max(10).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Output token limit of one step (Anthropic requires one: default 4096). */
  maxTokens: z.int().positive().optional(),
});

const Agent = z.strictObject({
  mode: Mode.default('ask'),
  tools: z.array(z.string().min(1)).optional(),
  rules: z.array(ToolRule).default([]),
  model: Model.optional(),
  budget: Budget.optional(),
  interaction: Interaction.optional(),
});

const McpServer = z.strictObject({
  command: PathText,
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.union([z.string(), SecretRef])).default({}),
  /** Tools the server is known to offer, with the annotations it reports (untrusted hints). */
  tools: z.record(z.string(), z.strictObject({ annotations: McpAnnotations.optional() })).default({}),
});

const Scheduled = z.strictObject({
  id: z.string().min(1),
  agent: z.string().min(1),
  cron: z.string().min(1),
  message: z.string(),
  /** Firings missed while the runtime was down: recorded as skipped (default) or run once. */
  missed: z.enum(['skip', 'run-once']).default('skip'),
  /** With `run-once`: how old the newest missed firing may be and still run (ms, default 1 h). */
  catchUpWindowMs: z.int().positive().optional(),
});

const SensitiveEntry = PathRuleInput.extend({ kind: z.enum(['sensitive', 'never-writable']) });

/**
 * The shape of `snotra.config.json` (DESIGN.md §12). Strict: an unknown key is an error, so a
 * misspelt restriction is never silently ignored.
 */
export const ConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  /** Default: outside the workspace, `$XDG_STATE_HOME/snotra/<name>-<hash>` (see `defaultStateDir`). */
  stateDir: PathText.optional(),
  workspace: z
    .strictObject({ roots: z.array(Root).min(1) })
    .default({ roots: [{ id: 'workspace', path: '.', access: 'read-write', primary: true }] }),
  agents: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/), Agent)
    .default({ assistant: { mode: 'ask', rules: [] } }),
  /** Security metadata of extension/skill tools, and the user's local overrides for MCP tools. */
  tools: z.record(z.string().min(1), z.record(z.string(), z.unknown())).default({}),
  mcp: z
    .strictObject({ servers: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), McpServer).default({}) })
    .default({ servers: {} }),
  surfaces: z
    .strictObject({
      chat: z.strictObject({ agent: z.string().min(1).optional() }).optional(),
      scheduled: z.array(Scheduled).default([]),
      goalLoops: z.array(z.record(z.string(), z.unknown())).default([]),
      platforms: z.array(z.record(z.string(), z.unknown())).default([]),
    })
    .default({ scheduled: [], goalLoops: [], platforms: [] }),
  sidecar: z
    .strictObject({
      /** `false`: `snotra start` runs no sidecar (the ready line says `"sidecar": null`). */
      enabled: z.boolean().default(true),
      port: z.int().min(0).max(65535).default(0),
      allowedOrigins: z.array(z.string()).default([]),
      limits: z
        .strictObject({
          bodyBytes: z.int().positive().optional(),
          frameBytes: z.int().positive().optional(),
          connections: z.int().positive().optional(),
          requestsPerMinute: z.int().positive().optional(),
        })
        .optional(),
    })
    .default({ enabled: true, port: 0, allowedOrigins: [] }),
  bus: z.strictObject({ url: z.string().optional(), credentials: SecretRef.optional() }).default({}),
  /** Where secrets named in config are read (`os` keyring by default; `env`: `SNOTRA_SECRET_<NAME>`). */
  secrets: z
    .strictObject({ backend: z.enum(['os', 'env', 'memory']).default('os') })
    .default({ backend: 'os' }),
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
        .default([]),
    })
    .default({ allowPrivateHosts: [] }),
  /** How long an approval stays open before it expires (ms); default one day. */
  approvals: z.strictObject({ ttlMs: z.int().positive().optional() }).default({}),
  /** Extra sensitive or never-writable paths: config can only make the built-in list stricter. */
  sensitivePaths: z.array(SensitiveEntry).default([]),
});
/** A loaded config: paths absolute, the state dir resolved (configured or default). */
export type Config = Omit<z.infer<typeof ConfigSchema>, 'stateDir'> & { stateDir: string };
export type AgentConfig = z.infer<typeof Agent>;
