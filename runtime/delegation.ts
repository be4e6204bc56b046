import { sliceBudget } from '../machines/run/budget.ts';
import type { SpawnArgs, SpawnResult, SubAgentSpawner } from '../actors/delegation/spawn-agent.ts';
import { ToolError } from '../actors/tools/types.ts';
import type { RunContext, RunInput, RunOutcome } from '../machines/run/types.ts';
import { makeChildRunId } from '../machines/run/run-id.ts';
import type { PolicyContext } from '../policy/context.ts';
import {
  AuthorityEnvelope,
  contextFromEnvelope,
  createDelegationGuard,
  effectiveEnvelope,
  explorerEnvelope,
  EXPLORER_TOOLS,
  guardPathSpace,
  intersect,
  type PathSpace,
  type SpawnRequest,
} from '../policy/delegation/index.ts';
import type { ToolRegistry } from '../policy/registry.ts';
import type { Store } from '../store/index.ts';
import type { AuthorityState } from './authority/authority-state.ts';
import type { LoadedConfig } from './config/load.ts';
import type { PolicyEnvironment } from './policy/environment.ts';
import type { RunHost } from './runs/run-host.ts';

/** What a sub-agent run stores about its delegation: its own envelope and what was narrowed. */
export interface ChildAuthority {
  readonly envelope: AuthorityEnvelope;
  readonly narrowed: SpawnResult['narrowed'];
  readonly profile: string;
}

/**
 * The persisted form of a `ChildAuthority`. Snapshots are redacted by key before they are
 * stored, and a key named like `secrets` would be censored: the secret names are kept under a
 * neutral key so the envelope restores intact (they are names, never values).
 */
interface StoredAuthority {
  readonly envelope: Omit<AuthorityEnvelope, 'secrets'>;
  readonly vaultEntries: readonly string[];
  readonly narrowed: SpawnResult['narrowed'];
  readonly profile: string;
}

function toStored(a: ChildAuthority): StoredAuthority {
  const { secrets, ...envelope } = a.envelope;
  return { envelope, vaultEntries: secrets, narrowed: a.narrowed, profile: a.profile };
}

/** The profile name of the fixed Explorer. */
export const EXPLORER_PROFILE = 'explorer';

function childAuthority(ctx: RunContext): ChildAuthority | null {
  const a = ctx.authority as StoredAuthority | undefined | null;
  if (a === undefined || a === null) return null;
  const parsed = AuthorityEnvelope.safeParse({ ...a.envelope, secrets: a.vaultEntries });
  if (!parsed.success) throw new Error(`run ${ctx.runId}: stored delegated authority is invalid`);
  return { ...a, envelope: parsed.data };
}

/**
 * Delegation in the running runtime: the live authority chain of every run, the policy context
 * of a sub-agent (its own envelope met with every ancestor's current one, plus the step-4 guard
 * over the ancestors), and the spawner behind `spawn_agent`.
 */
export class Delegation implements SubAgentSpawner {
  readonly space: PathSpace;

  constructor(
    private readonly loaded: LoadedConfig,
    private readonly store: Store,
    private readonly registry: ToolRegistry,
    private readonly env: PolicyEnvironment,
    private readonly authority: AuthorityState,
    private readonly runs: RunHost,
    private readonly waitForRun: (runId: string) => Promise<RunOutcome>,
    private readonly clock: () => number,
  ) {
    this.space = guardPathSpace(env.paths);
  }

  /**
   * The envelopes of a run's ancestors as they are now, outermost first: the top-level agent's
   * live envelope (current roots and mode), then each intermediate child's own envelope.
   */
  chainOf(ctx: RunContext): AuthorityEnvelope[] {
    const chain: AuthorityEnvelope[] = [];
    let parentId = ctx.parentRunId;
    const seen = new Set<string>([ctx.runId]);
    while (parentId !== null) {
      if (seen.has(parentId)) throw new Error(`run ${ctx.runId}: delegation cycle at ${parentId}`);
      seen.add(parentId);
      const parent = this.runs.contextOf(parentId);
      if (parent === null) throw new Error(`run ${ctx.runId}: parent run ${parentId} is unknown`);
      const own = childAuthority(parent);
      chain.unshift(
        own === null
          ? this.authority.topLevelEnvelope(parent.agentId, parent.interaction, parent.taskId)
          : own.envelope,
      );
      parentId = own === null ? null : parent.parentRunId;
    }
    return chain;
  }

  /** The effective envelope of a run now (a top-level run's is its agent's live envelope). */
  envelopeOf(ctx: RunContext): AuthorityEnvelope {
    const own = childAuthority(ctx);
    if (own === null) return this.authority.topLevelEnvelope(ctx.agentId, ctx.interaction, ctx.taskId);
    return effectiveEnvelope(this.chainOf(ctx), own.envelope, this.space);
  }

  /** The policy context of a sub-agent's next call, derived live from its ancestors. */
  childPolicy(ctx: RunContext): PolicyContext | null {
    const own = childAuthority(ctx);
    if (own === null) return null;
    const chain = this.chainOf(ctx);
    const effective = effectiveEnvelope(chain, own.envelope, this.space);
    return {
      registry: this.registry,
      ...contextFromEnvelope(effective),
      sessionId: ctx.sessionId,
      taskId: ctx.taskId,
      // A child never inherits the session's approvals: each of its calls stands on its envelope.
      sessionApprovals: [],
      paths: this.env.paths,
      shell: this.env.shell,
      // A child's shell runs in the same sandbox, mounting its own envelope.
      sandboxed: this.env.sandbox.name !== 'none',
      delegation: createDelegationGuard(() => this.chainOf(ctx), {
        space: this.space,
        registry: this.registry,
      }),
    };
  }

  /** `spawn_agent`: starts the child run (or finds it again after a restart) and waits for its outcome. */
  async spawn(parentRunId: string, callId: string, args: SpawnArgs): Promise<SpawnResult> {
    const childRunId = makeChildRunId(parentRunId, callId);
    const existing = this.runs.contextOf(childRunId);
    if (existing !== null) return this.#result(childRunId, await this.#await(childRunId), existing);

    const parent = this.runs.contextOf(parentRunId);
    if (parent === null) throw new ToolError('unknown_parent_run', `parent run ${parentRunId} is unknown`);
    const parentEnvelope = this.envelopeOf(parent);
    const request = this.#request(args);
    const { envelope: narrowedEnvelope, narrowed } = intersect(parentEnvelope, request, {
      interaction: parent.interaction,
      space: this.space,
    });
    const isExplorer = args.profile === EXPLORER_PROFILE;
    const envelope = isExplorer ? explorerEnvelope(narrowedEnvelope) : narrowedEnvelope;
    const allNarrowed: { kind: string; item: string; reason: string }[] = [...narrowed];
    if (isExplorer) {
      for (const tool of args.tools ?? []) {
        if (!EXPLORER_TOOLS.includes(tool) && narrowedEnvelope.tools.includes(tool)) {
          allNarrowed.push({ kind: 'tool', item: tool, reason: 'explorer_profile' });
        }
      }
      for (const root of args.roots ?? []) {
        if (root.access === 'read-write')
          allNarrowed.push({ kind: 'access', item: root.path, reason: 'explorer_profile' });
      }
    }
    const now = this.clock();
    // A slice of what the parent has left (machines/run/budget.ts): the child never has more.
    const budget = sliceBudget(parent, now);
    const agentId = isExplorer ? EXPLORER_PROFILE : args.profile;
    const authority: ChildAuthority = { envelope, narrowed: allNarrowed, profile: args.profile };
    this.store.audit.append({
      kind: 'agent_spawned',
      sessionId: parent.sessionId,
      agentId,
      surface: parent.surface,
      runId: childRunId,
      callId,
      tool: 'spawn_agent',
      status: 'spawned',
      detail: {
        parentRunId,
        parentAgentId: parent.agentId,
        profile: args.profile,
        narrowed: allNarrowed,
        granted: {
          mode: envelope.mode,
          tools: envelope.tools,
          roots: envelope.roots.map((r) => ({ path: r.path, access: r.access })),
        },
        budget,
      },
    });
    const input: RunInput = {
      runId: childRunId,
      agentId,
      sessionId: parent.sessionId,
      taskId: parent.taskId,
      parentRunId,
      parentAgentId: parent.agentId,
      authority: toStored(authority),
      surface: parent.surface,
      interaction: parent.interaction,
      message: args.task,
      budget,
      startedAt: now,
    };
    this.runs.start(input);
    const outcome = await this.#await(childRunId);
    return this.#result(childRunId, outcome, this.runs.contextOf(childRunId));
  }

  #request(args: SpawnArgs): SpawnRequest {
    if (args.profile === EXPLORER_PROFILE) {
      return {
        ...(args.roots ? { roots: args.roots.map((r) => ({ path: r.path, access: 'read' as const })) } : {}),
      };
    }
    const def = Object.hasOwn(this.loaded.config.agents, args.profile)
      ? this.loaded.config.agents[args.profile]
      : undefined;
    if (def === undefined) {
      throw new ToolError(
        'unknown_profile',
        `no agent profile ${JSON.stringify(args.profile)}; profiles: ${[EXPLORER_PROFILE, ...Object.keys(this.loaded.config.agents)].join(', ')}`,
      );
    }
    const tools = args.tools ?? def.tools;
    return {
      mode: args.mode ?? def.mode,
      ...(tools ? { tools: [...tools] } : {}),
      rules: def.rules,
      // Asked for only when the profile says so; intersect keeps it only when the parent may delegate.
      ...(def.mayDelegate === true ? { mayDelegate: true } : {}),
      ...(args.roots
        ? { roots: args.roots.map((r) => ({ path: r.path, ...(r.access ? { access: r.access } : {}) })) }
        : {}),
    };
  }

  async #await(childRunId: string): Promise<RunOutcome> {
    // A child found after a restart may be stored but not live: bring it back unless it is parked.
    if (!this.runs.isLive(childRunId)) {
      const summary = this.store.snapshots.get(childRunId);
      if (summary !== null && summary.status !== 'waiting_for_approval') this.runs.restore(childRunId);
    }
    return this.waitForRun(childRunId);
  }

  #result(childRunId: string, outcome: RunOutcome, ctx: RunContext | null): SpawnResult {
    const own = ctx === null ? null : childAuthority(ctx);
    return {
      childRunId,
      status: outcome.status,
      reason: outcome.reason,
      summary: outcome.text ?? null,
      narrowed: own?.narrowed ?? [],
      usage: {
        modelCalls: ctx?.used.modelCalls ?? 0,
        toolCalls: ctx?.used.toolCalls ?? 0,
        ...(ctx?.tokens === undefined ? {} : { tokens: ctx.tokens }),
      },
    };
  }
}
