/**
 * The package's public API (`import { Runtime } from 'snotra-runtime'`): the in-process runtime,
 * config loading, the policy engine and its Decision, and the run feed's events. README.md
 * "Embedding" shows them together; anything not exported here is internal and may change.
 */
export {
  Runtime,
  DEFAULT_BUDGET,
  LOG_LEVELS,
  GrantNotEligibleError,
  type ApprovalListener,
  type ApprovalsFacade,
  type AuthorityFacade,
  type GoalsFacade,
  type GrantScope,
  type InspectFacade,
  type NodeFacade,
  type RunsFacade,
  type LogLevel,
  type RuntimeOptions,
  type SubmitOptions,
} from './runtime/runtime.ts';
export {
  CONFIG_FILE_NAME,
  loadConfig,
  parseConfig,
  resolveConfig,
  type LoadOptions,
  type LoadedConfig,
} from './runtime/config/load.ts';
export { systemClock, type Clock, type TimerHandle } from './runtime/time/clock.ts';
export { SimulatedClock } from './runtime/time/simulated-clock.ts';
export { ConfigError } from './runtime/config/errors.ts';
export { ConfigSchema, type AgentConfig, type Config } from './runtime/config/schema.ts';
export { modelFromConfig, type ModelFromConfigOptions } from './runtime/config/adapters/models.ts';
export type { ModelProvider, ModelStepRequest } from './actors/model/provider.ts';
export { evaluate } from './policy/evaluate.ts';
export type { PolicyContext, ToolCall } from './policy/context.ts';
export {
  Decision,
  DecisionKind,
  ReasonCode,
  RuleRef,
  RuleSource,
  STEP_NAMES,
  Target,
} from './policy/decision.ts';
export {
  FEED_CONTENT_MAX,
  RUN_FEED_EVENT_TYPES,
  type ApprovalOptions,
  type ApprovalPreview,
  type RunFeedEvent,
  type RunFeedEventBody,
  type RunFeedEventHeader,
  type RunFeedListener,
} from './runtime/events.ts';
export type { RunOutcome } from './machines/run/types.ts';
export type { ApprovalDecision, ApprovalRecord, DecideResult } from './store/index.ts';
