/**
 * `snotra mcp-servers`: start the configured MCP servers exactly as the runtime does (sandbox,
 * environment, secrets, limits), read their status and catalogs, and stop them. Touches no state
 * dir (no lock, no database): it can run beside a running runtime.
 */
import type { McpServerStatus, McpToolView } from '../../actors/mcp/index.ts';
import type { LoadedConfig } from '../config/load.ts';
import { createPolicyEnvironment } from '../policy/environment.ts';
import { registryFromConfig } from '../config/adapters/tool-registry.ts';
import { ProcessSupervisor } from '../processes/index.ts';
import { createSecretResolver } from '../secrets/index.ts';
import { secretStoreFromConfig } from '../config/adapters/secrets.ts';
import { Redactor } from '../../store/index.ts';
import { createRuntimeMcpHost } from './host.ts';

/** One server as `snotra mcp-servers` shows it. */
export interface McpServerReport {
  readonly status: McpServerStatus;
  /** Its tools with effective metadata and why (empty when it did not start). */
  readonly tools: readonly McpToolView[];
  readonly sandbox: string | null;
}

/** Thrown for an id that is not under `mcp.servers`. */
export class UnknownMcpServerError extends Error {
  readonly code = 'unknown_mcp_server';
}

/** A restart delay no inspection outlives (the largest a timer takes). */
const NO_RESTART_MS = 2 ** 31 - 1;

/** Starts the servers `ids` (default: all), reports them, and stops them. */
export async function inspectMcpServers(
  loaded: LoadedConfig,
  ids?: readonly string[],
): Promise<McpServerReport[]> {
  const servers = loaded.config.mcp.servers;
  for (const id of ids ?? []) {
    if (!Object.hasOwn(servers, id)) {
      const known = Object.keys(servers);
      throw new UnknownMcpServerError(
        `no MCP server ${JSON.stringify(id)} under mcp.servers${known.length ? ` (configured: ${known.join(', ')})` : ' (none is configured)'}`,
      );
    }
  }
  const chosen = ids === undefined ? servers : Object.fromEntries(ids.map((id) => [id, servers[id]]));
  const config = { ...loaded.config, mcp: { servers: chosen as typeof servers } };
  const env = await createPolicyEnvironment(loaded);
  const supervisor = new ProcessSupervisor({ sandbox: env.sandboxBackend, killGraceMs: 500 });
  const redactor = new Redactor();
  const registry = registryFromConfig(loaded);
  const host = createRuntimeMcpHost({
    config,
    registry,
    // An inspection reports what each server's start did: a server that failed stays `crashed`
    // instead of being restarted behind the report (it showed `starting` when the other
    // servers' start took longer than the backoff).
    limits: { restartBaseMs: NO_RESTART_MS, restartMaxMs: NO_RESTART_MS },
    supervisor,
    secrets: createSecretResolver(secretStoreFromConfig(loaded), redactor),
    redactor,
    roots: () =>
      loaded.config.workspace.roots.map((r) => ({
        ...r,
        primary: r.primary ?? false,
        source: r.source ?? 'workspace',
      })),
  });
  try {
    await host.start();
    return host.status().map((status) => ({
      status,
      tools: host.tools(status.id) ?? [],
      sandbox: supervisor.sandbox,
    }));
  } finally {
    await host.stop();
    await supervisor.shutdown();
  }
}
