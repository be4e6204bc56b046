import type { SessionApproval, StandingApproval } from './approvals.ts';
import type { ToolRegistry } from './registry.ts';
import type { Interaction, Mode } from './risk.ts';
import type { WorkspaceRoot } from './roots.ts';
import type { ToolRule } from './rules.ts';
import type { CommandAnalyzer, DelegationGuard, PathGuard } from './seams.ts';

/** A proposed tool call, as the model (or any surface) proposed it. Untrusted. */
export interface ToolCall {
  readonly tool: string;
  readonly args: unknown;
}

/**
 * Everything a decision depends on. Two equal contexts and calls always give the same Decision
 * (up to what the file system says about paths).
 */
export interface PolicyContext {
  readonly registry: ToolRegistry;
  readonly mode: Mode;
  /** Recorded for the surface; it never changes a decision (invariant 6). */
  readonly interaction: Interaction;
  /** The agent's tool set; null grants every registered tool. */
  readonly tools: ReadonlySet<string> | null;
  readonly rules: readonly ToolRule[];
  readonly roots: readonly WorkspaceRoot[];
  readonly sessionId: string | null;
  readonly taskId: string | null;
  readonly sessionApprovals: readonly SessionApproval[];
  readonly standingApprovals: readonly StandingApproval[];
  readonly paths: PathGuard;
  readonly shell: CommandAnalyzer;
  /**
   * Whether shell commands run inside an OS sandbox. Without one, a shell call that `allow` mode
   * would let through needs a human (`sandbox_unavailable`).
   */
  readonly sandboxed: boolean;
  /** Present for delegated runs: the parent's authority the call must stay inside. */
  readonly delegation: DelegationGuard | null;
}
