/**
 * The MCP client host: every configured server's connection, their tools in the one tool
 * registry (`mcp:<server>:<tool>`, metadata from the user's override and the server's hints,
 * argument schemas and declaration digests), and one executor per tool name.
 */
import { explainMcpMetadata, mcpToolName, type McpOverride } from '../../policy/mcp.ts';
import type { ToolSecurityMetadata } from '../../policy/metadata.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { ToolExecutor } from '../tools/types.ts';
import type { SecretResolver } from '../tools/types.ts';
import { callMcpTool } from './call.ts';
import { McpConnection, type ConnectionDeps } from './connection.ts';
import { DEFAULT_MCP_LIMITS, type McpLimits } from './limits.ts';
import { argumentSchema } from './schema.ts';
import type { ListedTool, McpServerSpec, McpServerStatus, McpSpawner, TextRedactor } from './types.ts';

/** Options of `McpHost`. */
export interface McpHostOptions {
  readonly servers: readonly McpServerSpec[];
  readonly registry: ToolRegistry;
  /** The user's override of `mcp:<server>:<tool>`, if any. */
  readonly override: (name: string) => McpOverride | undefined;
  readonly spawn: McpSpawner;
  readonly secrets: SecretResolver;
  readonly redactor: TextRedactor;
  readonly placement: ConnectionDeps['placement'];
  /** Whether servers run in the OS sandbox. */
  readonly sandboxed: boolean;
  readonly limits?: Partial<McpLimits>;
  readonly onStatus?: (status: McpServerStatus) => void;
}

/** One tool of a server as a listing shows it: effective metadata and why. */
export interface McpToolView {
  readonly name: string;
  readonly tool: string;
  readonly offered: boolean;
  readonly metadata: ToolSecurityMetadata;
  readonly annotations: ListedTool['annotations'];
  readonly why: readonly string[];
  readonly digest: string;
}

/**
 * Guarantees: the registry holds a server's tools only while that server is ready, exactly as its
 * latest listing says (filtered-out tools never); `executor(name)` exists for every MCP tool name
 * and refuses whatever is not callable now; `stop()` ends every server's process tree.
 */
export class McpHost {
  readonly limits: McpLimits;
  readonly #connections = new Map<string, McpConnection>();
  readonly #executors = new Map<string, ToolExecutor>();

  constructor(private readonly options: McpHostOptions) {
    this.limits = { ...DEFAULT_MCP_LIMITS, ...options.limits };
    for (const spec of options.servers) {
      const connection: McpConnection = new McpConnection(spec, {
        spawn: options.spawn,
        secrets: options.secrets,
        redactor: options.redactor,
        limits: this.limits,
        placement: options.placement,
        onCatalog: (tools) => this.#sync(spec.id, tools),
        onStatus: (s) => options.onStatus?.(s),
      });
      this.#connections.set(spec.id, connection);
    }
  }

  /** Starts every server; resolves once each is ready or failed its first start (bounded). */
  async start(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((c) => c.start()));
  }

  /** The connection of server `id`. */
  connection(id: string): McpConnection | undefined {
    return this.#connections.get(id);
  }

  /** Statuses of every server. */
  status(): McpServerStatus[] {
    return [...this.#connections.values()].map((c) => c.status());
  }

  /** The tools of server `id` with their effective metadata and why, or undefined for an unknown id. */
  tools(id: string): McpToolView[] | undefined {
    const connection = this.#connections.get(id);
    if (connection === undefined) return undefined;
    return connection.listed().map((t) => {
      const name = mcpToolName(id, t.name);
      const explained = explainMcpMetadata(this.options.override(name), t.annotations);
      const why = t.filteredOut === null ? explained.why : [t.filteredOut, ...explained.why];
      return {
        name,
        tool: t.name,
        offered: t.filteredOut === null,
        metadata: explained.metadata,
        annotations: t.annotations,
        why,
        digest: t.digest,
      };
    });
  }

  /** The executor of MCP tool `name` (`mcp:<server>:<tool>`), or undefined for no configured server. */
  executor(name: string): ToolExecutor | undefined {
    const found = this.#executors.get(name);
    if (found !== undefined) return found;
    const match = /^mcp:([A-Za-z0-9_-]+):(.+)$/.exec(name);
    const connection = match ? this.#connections.get(match[1] ?? '') : undefined;
    if (match === null || connection === undefined) return undefined;
    const tool = match[2] ?? '';
    const executor: ToolExecutor = {
      execute: (args, ctx) =>
        callMcpTool(connection, tool, args, ctx, {
          limits: this.limits,
          sandboxed: this.options.sandboxed,
          pathArguments: () => this.options.override(name)?.pathArguments ?? [],
          redact: (text) => this.options.redactor.redactString(text),
        }),
    };
    this.#executors.set(name, executor);
    return executor;
  }

  #sync(server: string, tools: readonly ListedTool[] | null): void {
    const { registry } = this.options;
    registry.unregisterMcpServer(server);
    for (const t of tools ?? []) {
      if (t.filteredOut !== null) continue;
      const name = mcpToolName(server, t.name);
      registry.registerMcp(server, t.name, this.options.override(name), t.annotations, {
        args: argumentSchema(t.check),
        digest: t.digest,
      });
    }
  }

  /** Ends every server's process tree. */
  async stop(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((c) => c.stop()));
  }
}
