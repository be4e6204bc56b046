/**
 * An MCP fixture's servers behind the runtime's own MCP host (policy environment, process
 * supervisor, tool registry), without a whole runtime, and a call as a human approved it.
 */
import type { McpHost } from '../../actors/mcp/index.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { McpLimits } from '../../actors/mcp/limits.ts';
import { createRuntimeMcpHost } from '../../runtime/mcp/host.ts';
import { createPolicyEnvironment, type PolicyEnvironment } from '../../runtime/policy/environment.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createSecretResolver } from '../../runtime/secrets/index.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { Redactor } from '../../store/index.ts';
import type { McpFixture } from './support.ts';

/** The host and what it was built on; `close()` stops it, the supervisor and the fixture. */
export interface HostedMcp {
  readonly env: PolicyEnvironment;
  readonly supervisor: ProcessSupervisor;
  readonly registry: ToolRegistry;
  readonly host: McpHost;
  /**
   * Runs `name` (`mcp:server:tool`) as a session approval allowed it, on the declaration the
   * registry lists now (or on `digest`, one recorded earlier).
   */
  call(name: string, args: Record<string, unknown>, digest?: string): Promise<unknown>;
  close(): Promise<void>;
}

/** Builds the host of `fx` (in the OS sandbox unless `sandbox: false`); it is not started. */
export async function hostMcp(
  fx: McpFixture,
  opts: { limits: Partial<McpLimits>; secrets?: Record<string, string>; sandbox?: boolean },
): Promise<HostedMcp> {
  const env = await createPolicyEnvironment(
    fx.loaded,
    opts.sandbox === false
      ? { detectSandbox: () => ({ name: 'none', reason: 'this test runs it bare' }) }
      : {},
  );
  const supervisor = new ProcessSupervisor({ sandbox: env.sandboxBackend, killGraceMs: 300 });
  const registry = registryFromConfig(fx.loaded);
  const redactor = new Redactor();
  const host = createRuntimeMcpHost({
    config: fx.loaded.config,
    registry,
    supervisor,
    secrets: createSecretResolver(new MemorySecretStore(opts.secrets ?? {}), redactor),
    redactor,
    roots: () => [
      { id: 'project', path: fx.project, access: 'read-write', primary: true, source: 'workspace' },
    ],
    limits: opts.limits,
  });
  const call = (name: string, args: Record<string, unknown>, digest?: string): Promise<unknown> => {
    const listed = registry.get(name);
    const toolDigest = digest ?? (listed?.status === 'ok' ? listed.digest : undefined);
    const executor = host.executor(name);
    if (executor === undefined) throw new Error(`no executor for ${name}`);
    return executor.execute(args, {
      runId: 'r',
      callId: `c-${name}`,
      idempotencyKey: 'k',
      decision: {
        decision: 'allow',
        reason: 'session_approval',
        risk: 'external',
        rule: { id: 's', source: 'session-approval' },
        targets: [],
        humanRequired: false,
        step: 7,
        ...(toolDigest ? { toolDigest } : {}),
      },
      roots: [],
      paths: env.paths,
      signal: new AbortController().signal,
      secrets: { resolve: async () => '' },
    });
  };
  const close = async (): Promise<void> => {
    await host.stop();
    await supervisor.shutdown();
    fx.cleanup();
  };
  return { env, supervisor, registry, host, call, close };
}
