import type { AuthorityEnvelope } from '../../policy/delegation/index.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Interaction, Mode } from '../../policy/risk.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { Store } from '../../store/index.ts';
import type { LoadedConfig } from '../config/load.ts';

/**
 * The live authority of a running runtime: the workspace roots and each agent's mode as they
 * are now. Changes apply at once to every run and, through the delegation chain, to every live
 * descendant (derived on each decision, never copied), and each change is audited.
 */
export class AuthorityState {
  #roots: WorkspaceRoot[];
  readonly #modes = new Map<string, Mode>();

  constructor(
    private readonly loaded: LoadedConfig,
    private readonly registry: ToolRegistry,
    private readonly store: Store,
  ) {
    this.#roots = loaded.config.workspace.roots.map((r) => ({
      ...r,
      primary: r.primary ?? false,
      source: r.source ?? 'workspace',
    }));
  }

  /** The workspace roots now. */
  roots(): readonly WorkspaceRoot[] {
    return this.#roots;
  }

  /** Replaces the workspace roots (a human's change); audited as `root_changed`. */
  setRoots(roots: readonly WorkspaceRoot[], by: string): void {
    const before = this.#roots.map((r) => ({ id: r.id, path: r.path, access: r.access }));
    this.#roots = roots.map((r) => ({ ...r }));
    this.store.audit.append({
      kind: 'root_changed',
      status: 'changed',
      detail: { by, before, after: this.#roots.map((r) => ({ id: r.id, path: r.path, access: r.access })) },
    });
  }

  /** An agent's mode now (config, or a change made while running). */
  mode(agentId: string): Mode {
    return this.#modes.get(agentId) ?? this.loaded.config.agents[agentId]?.mode ?? 'deny';
  }

  /** Changes an agent's mode while it runs; audited as `mode_changed`. */
  setMode(agentId: string, mode: Mode, by: string): void {
    const before = this.mode(agentId);
    this.#modes.set(agentId, mode);
    this.store.audit.append({
      kind: 'mode_changed',
      agentId,
      status: mode,
      detail: { by, before, after: mode },
    });
  }

  /** The envelope of a top-level run of `agentId`: its mode, tools and rules, the current roots, its task's standing approvals. */
  topLevelEnvelope(agentId: string, interaction: Interaction, taskId: string | null): AuthorityEnvelope {
    const def = this.loaded.config.agents[agentId];
    return {
      mode: this.mode(agentId),
      tools: [...(def?.tools ?? this.registry.names())],
      rules: [...(def?.rules ?? [])],
      roots: this.#roots.map((r) => ({ ...r })),
      secrets: [],
      standingApprovals:
        taskId === null
          ? []
          : this.store.standingApprovals
              .listActive(taskId)
              .map((a) => ({ id: a.id, ownerTaskId: a.ownerTaskId, tool: a.tool, target: a.target })),
      interaction,
      mayDelegate: true,
    };
  }
}
