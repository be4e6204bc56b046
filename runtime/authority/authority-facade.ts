import type { Mode } from '../../policy/risk.ts';
import type { WorkspaceRoot } from '../../policy/roots.ts';
import type { AgentPool } from '../agents/agent-pool.ts';
import type { AuthorityState } from './authority-state.ts';

/** What {@link AuthorityFacade} hands its calls to. */
export interface AuthorityFacadeDeps {
  readonly authority: AuthorityState;
  readonly agents: AgentPool;
}

/** `runtime.authority`: a human's changes to what the agents may reach, while running. */
export class AuthorityFacade {
  readonly #deps: AuthorityFacadeDeps;

  constructor(deps: AuthorityFacadeDeps) {
    this.#deps = deps;
  }

  /** Replaces the workspace roots while running (a human's change); live runs and their sub-agents shrink at once. Audited. */
  setRoots(roots: readonly WorkspaceRoot[], by: string): void {
    this.#deps.authority.setRoots(roots, by);
  }

  /** Changes an agent's mode while running; its live sub-agents and its bus grant follow at once. Audited. */
  setAgentMode(agentId: string, mode: Mode, by: string): void {
    this.#deps.authority.setMode(agentId, mode, by);
    this.#deps.agents.regrant(agentId, mode);
  }
}
