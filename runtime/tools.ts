import type { McpHost } from '../actors/mcp/index.ts';
import { createBuiltinExecutors, FileWorkerPool } from '../actors/tools/index.ts';
import type { ToolExecutor } from '../actors/tools/types.ts';
import type { createRuntimeMcpHost, RuntimeMcpOptions } from './mcp/host.ts';
import { ProcessSupervisor } from './processes/index.ts';
import type { Sandbox } from './sandbox/index.ts';

/** The built-in tool executors with the resources they own (worker pool, process supervisor). */
export interface DefaultTools {
  readonly executors: Readonly<Record<string, ToolExecutor>>;
  /** The MCP client host (configured servers), or null when none is configured. */
  readonly mcp: McpHost | null;
  /** Terminates every child process tree (MCP servers included) and the worker pool. */
  close(): Promise<void>;
}

/**
 * The built-in executors of DESIGN.md §12, wired to a file worker pool and the process
 * supervisor (sanitized environments, process groups, lifeline, and the OS sandbox when there is one). `send_message` has no platform
 * until one is configured and fails with `platform_unavailable`. With `mcp`, the configured MCP
 * servers' host (started by the caller) on the same supervisor.
 */
export function createDefaultTools(
  options: {
    readonly allowPrivateHosts?: readonly string[];
    /** The OS sandbox every shell and git child runs in (null: none on this host). */
    readonly sandbox?: Sandbox | null;
    readonly mcp?: Omit<RuntimeMcpOptions, 'supervisor'> & {
      /**
       * `createRuntimeMcpHost` of `./mcp/host.ts`, which the caller imports only when servers are
       * configured (the MCP client library is a large import a runtime without servers skips).
       */
      readonly createHost: typeof createRuntimeMcpHost | null;
    };
  } = {},
): DefaultTools {
  const pool = new FileWorkerPool();
  const supervisor = new ProcessSupervisor({ sandbox: options.sandbox ?? null });
  const executors = createBuiltinExecutors({
    pool,
    runner: supervisor,
    http: { allowPrivateHosts: options.allowPrivateHosts ?? [] },
  });
  const configured = options.mcp !== undefined && Object.keys(options.mcp.config.mcp.servers).length > 0;
  let mcp: McpHost | null = null;
  if (configured && options.mcp) {
    const { createHost, ...mcpOptions } = options.mcp;
    if (createHost === null)
      throw new Error('createDefaultTools: MCP servers are configured but no MCP host factory was given');
    mcp = createHost({ ...mcpOptions, supervisor });
  }
  return {
    executors,
    mcp,
    close: async () => {
      await mcp?.stop();
      await supervisor.shutdown();
      await pool.close();
    },
  };
}

/**
 * The executor table of a runtime: `base`, and every `mcp:<server>:<tool>` of `mcp` looked up as
 * it is asked for (MCP catalogs change while the runtime runs).
 */
export function withMcpExecutors(
  base: Readonly<Record<string, ToolExecutor>>,
  mcp: McpHost | null,
): Readonly<Record<string, ToolExecutor>> {
  if (mcp === null) return base;
  const lookup = (name: string | symbol): ToolExecutor | undefined => {
    if (typeof name !== 'string') return undefined;
    if (Object.hasOwn(base, name)) return base[name];
    return name.startsWith('mcp:') ? mcp.executor(name) : undefined;
  };
  return new Proxy(base, {
    get: (_, name) => lookup(name),
    has: (_, name) => lookup(name) !== undefined,
    getOwnPropertyDescriptor: (_, name) => {
      const value = lookup(name);
      return value === undefined
        ? undefined
        : { value, enumerable: true, configurable: true, writable: false };
    },
  });
}
