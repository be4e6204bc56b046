/**
 * The OS sandbox (DESIGN.md §10): every `shell` and `git_query` child (and any long-lived child
 * asked for with a confinement) runs confined to its run's envelope. See README.md here.
 */
export {
  bwrapArgs,
  bwrapStdioArgs,
  HANDED_STDIN_FD,
  HANDED_STDOUT_FD,
  PRIVATE_RUN,
  PRIVATE_TMP,
} from './bwrap.ts';
export { BWRAP_INSTALL_HINT, detectSandbox } from './detect.ts';
export type { DetectOptions, SandboxStatus } from './detect.ts';
export { confinementOf, envelopeGrantsNetwork } from './envelope.ts';
export { DEFAULT_WALK_LIMITS, findProtectedPaths, hostRulesOf } from './host.ts';
export type { FoundPath, HostFindings, HostRules, WalkedRoot, WalkLimits } from './host.ts';
export { depthOf, isWithin } from './plan.ts';
export type { HiddenKind, HiddenPath, SandboxPlan } from './plan.ts';
export { createBubblewrapSandbox, planFor, SandboxError } from './sandbox.ts';
export type { BubblewrapOptions, Sandbox, SandboxName, WrapOptions, WrappedCommand } from './sandbox.ts';
export { SANDBOX_EXEC, sandboxExecArgs, sandboxExecProfile } from './sandbox-exec.ts';
