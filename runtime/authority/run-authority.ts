import type { RunContext } from '../../machines/run/types.ts';
import type { PolicyContext } from '../../policy/context.ts';
import { GOAL_SURFACE, withGoalTools } from '../../policy/goal-tools.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { Store } from '../../store/index.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { Delegation } from '../delegation.ts';
import { agentPolicyContext } from '../policy/agent-context.ts';
import type { PolicyEnvironment } from '../policy/environment.ts';
import type { RunHost } from '../runs/run-host.ts';
import type { Confinement } from '../../actors/tools/process-runner.ts';
import { confinementOf } from '../sandbox/index.ts';
import type { AuthorityState } from './authority-state.ts';

/** What a run's authority is worked out from. */
export interface RunAuthorityDeps {
  readonly loaded: LoadedConfig;
  readonly registry: ToolRegistry;
  readonly policyEnv: PolicyEnvironment;
  readonly store: Store;
  readonly authority: AuthorityState;
  readonly delegation: Delegation;
  readonly runs: RunHost;
}

/**
 * Which policy and roots a run sees, as they are now: its agent's config with the roots and mode
 * of this moment (a human's change applies to the next call at once), its session's and task's
 * grants, a sub-agent's delegated envelope instead of its agent's, and the goal tools only in a
 * goal run.
 */
export class RunAuthority {
  constructor(private readonly deps: RunAuthorityDeps) {}

  /** The policy context the run's next call is evaluated in. */
  policyFor(ctx: RunContext): PolicyContext {
    const policy = this.#basePolicy(ctx);
    // The goal tools exist in goal runs only.
    const goalRun = ctx.surface === GOAL_SURFACE && ctx.parentRunId === null;
    return { ...policy, tools: withGoalTools(goalRun, policy.tools, this.deps.registry.names()) };
  }

  /**
   * A run's roots as they are now and what the OS sandbox of its children mounts: its own
   * envelope (a sub-agent's roots and access, not its parent's; the network only when the
   * envelope grants `external` risk).
   */
  scopeOf(runId: string): { roots: readonly WorkspaceRoot[]; confinement: Confinement } {
    const ctx = this.deps.runs.contextOf(runId);
    if (ctx === null) {
      const roots = this.deps.authority.roots();
      // Not a live run: its roots, and no network.
      const confinement = {
        roots: roots.map((r) => ({ path: r.path, access: r.access, ...(r.deny ? { deny: r.deny } : {}) })),
        network: false,
      };
      return { roots, confinement };
    }
    const envelope = this.deps.delegation.envelopeOf(ctx);
    return { roots: envelope.roots, confinement: confinementOf(envelope, this.deps.registry) };
  }

  #basePolicy(ctx: RunContext): PolicyContext {
    const { deps } = this;
    const child = deps.delegation.childPolicy(ctx);
    if (child !== null) return child;
    const base = agentPolicyContext(deps.loaded, ctx.agentId, {
      registry: deps.registry,
      paths: deps.policyEnv.paths,
      shell: deps.policyEnv.shell,
      sandboxed: deps.policyEnv.sandbox.name !== 'none',
      interaction: ctx.interaction,
      sessionId: ctx.sessionId,
      taskId: ctx.taskId,
      // Only this agent's: a grant given on one agent's card never covers another agent of the session.
      sessionApprovals: deps.store.sessionApprovals.listActiveFor(ctx.sessionId, ctx.agentId),
      standingApprovals: ctx.taskId === null ? [] : deps.store.standingApprovals.listActive(ctx.taskId),
    });
    // Roots and mode as they are now: a change applies to the next call at once.
    return { ...base, mode: deps.authority.mode(ctx.agentId), roots: deps.authority.roots() };
  }
}
