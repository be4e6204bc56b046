/**
 * The runtime's MCP client host: configured servers (`mcp.servers`) started through the process
 * supervisor — in the OS sandbox, with the allowlisted environment plus each server's own
 * variables (secrets resolved here and registered with the redactor), in its own process group
 * behind the lifeline — and their tools in the runtime's registry.
 */
import { McpHost, type McpServerSpec, type McpServerStatus } from '../../actors/mcp/index.ts';
import type { SecretResolver } from '../../actors/tools/types.ts';
import { McpOverride } from '../../policy/mcp.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { Config } from '../config/schema.ts';
import type { ProcessSupervisor } from '../processes/index.ts';

/** The servers of a config as the client needs them. */
export function mcpServerSpecs(config: Pick<Config, 'mcp'>): McpServerSpec[] {
  return Object.entries(config.mcp.servers).map(([id, def]) => ({
    id,
    command: def.command,
    args: def.args,
    env: def.env,
    filter: { include: def.tools.include, exclude: def.tools.exclude },
    timeoutMs: def.timeoutMs,
    network: def.network,
  }));
}

/** The user's override of each `mcp:<server>:<tool>` in `tools` (invalid ones are config errors elsewhere). */
export function mcpOverrides(config: Pick<Config, 'tools'>): (name: string) => McpOverride | undefined {
  const map = new Map<string, McpOverride>();
  for (const [name, entry] of Object.entries(config.tools)) {
    if (!name.startsWith('mcp:')) continue;
    const parsed = McpOverride.safeParse(entry);
    if (parsed.success) map.set(name, parsed.data);
  }
  return (name) => map.get(name);
}

/** What the runtime gives the MCP host. */
export interface RuntimeMcpOptions {
  readonly config: Pick<Config, 'mcp' | 'tools'>;
  readonly registry: ToolRegistry;
  readonly supervisor: ProcessSupervisor;
  readonly secrets: SecretResolver;
  readonly redactor: { redactString(text: string): string };
  /** The workspace roots as they are now (the servers' sandbox mounts them with their access). */
  readonly roots: () => readonly WorkspaceRoot[];
  readonly onStatus?: (status: McpServerStatus) => void;
  readonly limits?: ConstructorParameters<typeof McpHost>[0]['limits'];
}

/** Creates the host (not started). */
export function createRuntimeMcpHost(options: RuntimeMcpOptions): McpHost {
  const { supervisor } = options;
  return new McpHost({
    servers: mcpServerSpecs(options.config),
    registry: options.registry,
    override: mcpOverrides(options.config),
    secrets: options.secrets,
    redactor: options.redactor,
    sandboxed: supervisor.sandbox !== null,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.onStatus ? { onStatus: options.onStatus } : {}),
    placement: () => {
      const roots = options.roots();
      const primary = roots.find((r) => r.primary) ?? roots[0];
      return {
        confine: {
          roots: roots.map((r) => ({ path: r.path, access: r.access, ...(r.deny ? { deny: r.deny } : {}) })),
        },
        cwd: primary?.path ?? process.cwd(),
      };
    },
    spawn: async (request) => {
      const child = await supervisor.spawnConfined({ ...request, stdin: 'pipe' });
      return child;
    },
  });
}
