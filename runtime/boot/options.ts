import type { ModelProvider } from '../../actors/model/provider.ts';
import type { ToolExecutor } from '../../actors/tools/types.ts';
import type { Interaction } from '../../policy/risk.ts';
import type { BusTarget } from '../bus/index.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { RunFeedListener } from '../events.ts';
import type { SandboxStatus } from '../sandbox/index.ts';
import type { SecretStore } from '../secrets/index.ts';
import type { Clock } from '../time/clock.ts';

/** Default budgets of a run when the agent's config sets none. */
export const DEFAULT_BUDGET = { modelCalls: 50, toolCalls: 100, wallTimeMs: 10 * 60_000 } as const;

/** The log levels a runtime accepts. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How to start a runtime. */
export interface RuntimeOptions {
  readonly loaded: LoadedConfig;
  readonly model: ModelProvider;
  /** Replaces the built-in executors entirely (none are created). */
  readonly executors?: Readonly<Record<string, ToolExecutor>>;
  /** Executors used instead of the built-in ones of the same name (e.g. a platform for `send_message`). */
  readonly executorOverrides?: Readonly<Record<string, ToolExecutor>>;
  /** Where tools resolve secrets by name; each value is registered with the redactor before use. */
  readonly secretStore?: SecretStore;
  /**
   * The runtime's time: a {@link Clock} (its `now`, and the timers of every deadline, expiry and
   * schedule: a test can advance a `SimulatedClock`), or a bare `() => number` for `now` alone
   * (timers then run on Node's, and one that fires before `now` reaches its deadline arms again).
   * Default: wall time and Node's timers.
   */
  readonly clock?: Clock | (() => number);
  /** Where logs go (redacted); defaults to stderr. */
  readonly logDestination?: NodeJS.WritableStream;
  /** pino level (`trace` … `fatal`, `silent`); default `info`. */
  readonly logLevel?: LogLevel;
  /** How long an approval stays open (ms); default `approvals.ttlMs` of the config, else one day. */
  readonly approvalTtlMs?: number;
  /** Fallback poll for decisions written by another process (ms); default 1000. */
  readonly syncIntervalMs?: number;
  /** A resolved bus target instead of the embedded server (from `bus.url` + resolved credentials). */
  readonly busTarget?: BusTarget;
  /** Hears the run feed from boot on (runs resumed at boot included); see `onRunEvent`. */
  readonly onRunEvent?: RunFeedListener;
  /** Finds the OS sandbox for shell and git children; defaults to detecting bubblewrap. */
  readonly detectSandbox?: () => SandboxStatus;
  /**
   * The platform gateways will run (`snotra start`): every `surfaces.platforms[]` bot token must
   * resolve before anything is written (a missing one is a ConfigError naming the field).
   */
  readonly platforms?: boolean;
}

/** How a headless run is started (`submit`). */
export interface SubmitOptions {
  readonly sessionId?: string;
  /** The task the run belongs to (owner of its standing approvals); null by default. */
  readonly taskId?: string | null;
  readonly interaction?: Interaction;
  /** The surface name recorded with the run (default `cli`). */
  readonly surface?: string;
  /**
   * Whether the run continues its session as a durable conversation (default true): it starts
   * with the session's history, and a second message while a run holds the session is refused
   * (`SessionBusyError`). False for a run on its own (MCP `run_task` without a session).
   */
  readonly conversation?: boolean;
}

/** Lifetime of an agent actor's bus credentials under per-actor auth. */
export const ACTOR_CREDENTIAL_TTL_MS = 60 * 60_000;
