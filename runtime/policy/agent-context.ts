import type { SessionApproval, StandingApproval } from '../../policy/approvals.ts';
import type { PolicyContext } from '../../policy/context.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Interaction } from '../../policy/risk.ts';
import type { CommandAnalyzer, DelegationGuard, PathGuard } from '../../policy/seams.ts';
import type { LoadedConfig } from '../config/load.ts';

/** What the runtime supplies beside the config to decide for one agent. */
export interface AgentContextDeps {
  readonly registry: ToolRegistry;
  readonly paths: PathGuard;
  readonly shell: CommandAnalyzer;
  /**
   * Whether shell commands run in an OS sandbox (from `PolicyEnvironment.sandbox`), or a function
   * asked for it the first time a decision reads it (the `PolicyChecker` probes only then).
   */
  readonly sandboxed: boolean | (() => boolean);
  readonly interaction?: Interaction;
  readonly sessionId?: string | null;
  readonly taskId?: string | null;
  readonly sessionApprovals?: readonly SessionApproval[];
  readonly standingApprovals?: readonly StandingApproval[];
  readonly delegation?: DelegationGuard | null;
}

/** Thrown when an agent id is not in the config. */
export class UnknownAgentError extends Error {
  readonly code = 'unknown_agent';
  constructor(agent: string, known: readonly string[]) {
    super(`unknown agent ${JSON.stringify(agent)}; the config defines: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownAgentError';
  }
}

/** The policy context of one configured agent. */
export function agentPolicyContext(
  loaded: LoadedConfig,
  agent: string,
  deps: AgentContextDeps,
): PolicyContext {
  const def = Object.hasOwn(loaded.config.agents, agent) ? loaded.config.agents[agent] : undefined;
  if (def === undefined) throw new UnknownAgentError(agent, Object.keys(loaded.config.agents));
  const ctx: PolicyContext = {
    registry: deps.registry,
    mode: def.mode,
    interaction: deps.interaction ?? def.interaction ?? 'attended',
    tools: def.tools ? new Set(def.tools) : null,
    rules: def.rules,
    roots: loaded.config.workspace.roots.map((r) => ({
      ...r,
      primary: r.primary ?? false,
      source: r.source ?? 'workspace',
    })),
    sessionId: deps.sessionId ?? null,
    taskId: deps.taskId ?? null,
    sessionApprovals: deps.sessionApprovals ?? [],
    standingApprovals: deps.standingApprovals ?? [],
    paths: deps.paths,
    shell: deps.shell,
    sandboxed: deps.sandboxed === true,
    delegation: deps.delegation ?? null,
  };
  const lazy = deps.sandboxed;
  if (typeof lazy === 'function') {
    let known: boolean | null = null;
    Object.defineProperty(ctx, 'sandboxed', {
      enumerable: true,
      get: () => (known ??= lazy()),
    });
  }
  return ctx;
}
