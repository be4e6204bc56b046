/**
 * The runtime's entry point for surfaces (surfaces/**): the only runtime module they import
 * (lint checks it; tests may still import deep modules). Embedders use the package root
 * (index.ts) instead.
 *
 * Grouped by what a surface does with it: run a runtime in process, read and change its state
 * dir from another process (the CLI's control commands), check and show policy, and the edges'
 * own helpers. The CLI loads each command lazily; its bundle marks runtime modules free of side
 * effects (scripts/bundle-cli.mjs), so a command loads only the modules it uses from here.
 */

// The runtime in process, and what it takes to start one.
export { GrantNotEligibleError, LOG_LEVELS, Runtime } from './runtime.ts';
export type { GrantScope, LogLevel } from './runtime.ts';
export { StateDirLockedError } from './state-lock.ts';
export { modelFromConfig } from './config/adapters/models.ts';
export { secretStoreFromConfig } from './config/adapters/secrets.ts';
export { chooseSecretBackend, detectSecretBackend } from './secrets/index.ts';
export type { SecretBackendChoice } from './secrets/index.ts';
export { CONFIG_FILE_NAME, parseConfig, resolveConfig } from './config/load.ts';
export { runPolicyTests, type PolicyTestRow } from './config/rule-examples.ts';
export type { LoadedConfig } from './config/load.ts';
export type { PlatformConfig } from './config/schema.ts';
export type { StateEnv } from './config/state-dir.ts';
export { ConfigError } from './config/errors.ts';
export { didYouMean } from './config/suggest.ts';
export { runDemo } from './demo.ts';
export { runDoctor } from './doctor/checks.ts';
export { startLocalCluster } from './cluster/local-cluster.ts';

// Run ids, the live feed, the actor tree and the approvals a surface shows.
export { makeRunId, parseRunId } from '../machines/run/run-id.ts';
export type { RunIdParts } from '../machines/run/run-id.ts';
export type { RunOutcome } from '../machines/run/types.ts';
export type { RunFeedEvent } from './events.ts';
export {
  checkSessionName,
  SessionBusyError,
  SessionNameError,
  SessionNotFoundError,
} from './sessions/errors.ts';
export type { SessionMessage, SessionsView, SessionView } from './sessions/view.ts';
export { CompactionError } from './sessions/compact.ts';
export type { CompactOptions, CompactResult } from './sessions/compact.ts';
export type { ActorEvent, ActorFields, ActorNode, ActorTreeSnapshot } from './inspect/index.ts';
export type { ApprovalDetails } from './approvals/approval-details.ts';
export type { ApprovalPreview } from './approvals/preview.ts';
export type {
  AgentView,
  ApprovalView,
  ReadModels,
  RootView,
  RunAuditView,
  RunListItem,
  RunView,
  StoredRunView,
} from './read/read-models.ts';
export type {
  CallApproval,
  CallDecision,
  ConversationCall,
  ConversationItem,
  RunConversation,
} from './read/conversation.ts';

// A state dir read and changed from another process (the CLI's control commands).
export {
  ClusterDecisionError,
  decideAsLocalUser,
  listFirings,
  listPending,
  listRuns,
  showApproval,
  showRun,
} from './control/inbox.ts';
export type { ApprovalRecord } from './control/inbox.ts';
export { NoStateError } from './control/local-store.ts';
export { descendsFrom } from './control/ancestry.ts';
export { listSessions, removeSession, showSession } from './control/sessions.ts';
export { readGoal, readGoals, requestGoalControl } from './control/goals.ts';
export type { GoalRecord, IterationRecord } from './control/goals.ts';
export { listGrants, readActiveGrants, revokeGrant } from './control/grants.ts';
export type { GrantView } from './control/grants.ts';
export {
  AgentRewindError,
  RewindBusyError,
  RewindInClusterError,
  rewindCheckpoint,
  rewindList,
} from './control/rewind.ts';
export type { ExternalEffect, RewindOutcome } from './control/rewind.ts';
export { RewindBlockedError } from './runs/rewinds.ts';
export type { RewindRequest } from './runs/rewinds.ts';
export {
  CheckpointError,
  CheckpointFormatError,
  CheckpointNotFoundError,
  isCheckpointId,
  RestoreError,
} from './checkpoints/index.ts';
export type { Change, CheckpointSummary } from './checkpoints/index.ts';
export { AuditUnavailableError, openAuditReader } from './control/audit.ts';
export type { AuditEvent, AuditReader, ChainVerification } from './control/audit.ts';
export type { Provenance, ProvenanceStep } from './read/provenance.ts';
export { NotRunningError, watchActors } from './control/actor-watch.ts';
export type { ActorWatch } from './control/actor-watch.ts';
export type { ActorStreamLine } from './control/actor-stream.ts';
export {
  BadCursorError,
  listPlatforms,
  MAX_UNDELIVERED_PAGE,
  pairAsLocalUser,
  unpairAsLocalUser,
} from './platforms/control.ts';
export type { UndeliveredPaging } from './platforms/control.ts';
export { inspectMcpServers, UnknownMcpServerError } from './mcp/inspect.ts';
export type { McpServerReport } from './mcp/inspect.ts';

// Policy as a surface checks and shows it.
export { createPolicyChecker } from './policy/checker.ts';
export type { PolicyChecker } from './policy/checker.ts';
export { recordedCalls, replayCalls } from './policy/replay.ts';
export type { RecordedCall, ReplayChange, ReplayReport } from './policy/replay.ts';
export { effectivePolicy } from './policy/effective.ts';
export type { EffectivePolicy } from './policy/effective.ts';
export { createPolicyEnvironment } from './policy/environment.ts';
export { registryFromConfig } from './config/adapters/tool-registry.ts';

// The edges' own helpers: platform gateways, the desktop app's process tree, machine graphs.
export { replyKey } from './platforms/host.ts';
export type { InboundRecord, InboundUpdate, PlatformHost, Route } from './platforms/host.ts';
export {
  isLiveState,
  killGroup,
  listProcesses,
  POSIX_ENV_ALLOWLIST,
  signalGroup,
  WINDOWS_ENV_ALLOWLIST,
} from './processes/index.ts';
export type { ProcStat } from './processes/index.ts';
export { isProcessAlive } from './bus/processes.ts';
export { graphOf, MACHINES } from './viz/machines.ts';
export { renderGraph, VIZ_FORMATS } from './viz/render.ts';
export type { VizFormat } from './viz/render.ts';
export { systemClock } from './time/clock.ts';
export type { Clock, TimerHandle } from './time/clock.ts';
