import type { Logger } from 'pino';
import type { Store } from '../../store/index.ts';
import type { AuthorityState } from '../authority/authority-state.ts';
import type { PolicyEnvironment } from '../policy/environment.ts';
import type { SecretResolver } from '../../actors/tools/types.ts';
import { createDefaultTools, type DefaultTools } from '../tools.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { RuntimeOptions } from './options.ts';

/** The built-in tools (none when the options replace them), the MCP client host among them. */
export async function createTools(
  options: RuntimeOptions,
  deps: {
    registry: ToolRegistry;
    policyEnv: PolicyEnvironment;
    secrets: SecretResolver;
    store: Store;
    authority: AuthorityState;
    logger: Logger;
  },
): Promise<DefaultTools | null> {
  if (options.executors !== undefined) return null;
  const { config } = options.loaded;
  const { logger } = deps;
  // The MCP client library loads only when servers are configured.
  const createMcpHost =
    Object.keys(config.mcp.servers).length > 0 ? (await import('../mcp/host.ts')).createRuntimeMcpHost : null;
  return createDefaultTools({
    allowPrivateHosts: config.http.allowPrivateHosts,
    sandbox: deps.policyEnv.sandboxBackend,
    mcp: {
      createHost: createMcpHost,
      config,
      registry: deps.registry,
      secrets: deps.secrets,
      redactor: deps.store.redactor,
      roots: () => deps.authority.roots(),
      onStatus: (s) => {
        if (s.state === 'crashed') logger.warn({ mcpServer: s.id, error: s.lastError }, 'MCP server stopped');
        else logger.info({ mcpServer: s.id, state: s.state, tools: s.tools }, 'MCP server status');
      },
    },
  });
}
