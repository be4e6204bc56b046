import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createActor, type Actor } from 'xstate';
import { provideRunMachine } from '../actors/run/effects.ts';
import { toObservation } from '../actors/tools/observation.ts';
import { createDefaultTools, withMcpExecutors, type DefaultTools } from './tools.ts';
import type { McpHost } from '../actors/mcp/index.ts';
import type { ModelProvider } from '../actors/model/provider.ts';
import type { SecretResolver, ToolExecutor } from '../actors/tools/types.ts';
import { agentMachine, type AgentMessage } from '../machines/agent/machine.ts';
import type { RunContext, RunOutcome } from '../machines/run/types.ts';
import { makeRunId, makeSessionId, parseIterationMessageId } from '../machines/run/run-id.ts';
import type { ToolRegistry } from '../policy/registry.ts';
import type { Interaction } from '../policy/risk.ts';
import {
  openStore,
  Redactor,
  createLogger,
  type ApprovalDecision,
  type ApprovalRecord,
  type DecideResult,
  type FiringRecord,
  type Store,
} from '../store/index.ts';
import { ApprovalService } from './approvals/approval-service.ts';
import {
  connectBus,
  startEmbeddedNats,
  subject,
  type Bus,
  type BusTarget,
  type EmbeddedNats,
} from './bus/index.ts';
import type { LoadedConfig } from './config/load.ts';
import { ClusterDecisionError } from './control/inbox.ts';
import { startControlSocket } from './control/socket.ts';
import { AgentQueue, type Verdict } from './agent-queue.ts';
import { RUNTIME_KINDS, type RuntimeKinds } from './messages.ts';
import { agentPolicyContext } from './policy/agent-context.ts';
import { createPolicyEnvironment, type PolicyEnvironment } from './policy/environment.ts';
import { registryFromConfig } from './policy/registry-from-config.ts';
import { RunHost } from './runs/run-host.ts';
import { storedOutcome } from './runs/stored-run.ts';
import { ReadModels } from './read/read-models.ts';
import { RESUME_CONCURRENCY, RESUME_SLOT_MS, resumeBounded, type BootResume } from './runs/boot-resume.ts';
import { createSecretResolver, registerKnownSecrets, type SecretStore } from './secrets/index.ts';
import { AuthorityState } from './authority.ts';
import { Delegation } from './delegation.ts';
import { createSpawnAgentExecutor } from '../actors/delegation/spawn-agent.ts';
import type { Mode } from '../policy/risk.ts';
import type { WorkspaceRoot } from '../policy/roots.ts';
import { CLUSTER_FILE, RUNTIME_FILE } from './runtime-file.ts';
import { busTargetFromConfig } from './bus-target.ts';
import { ActorBusFactory, agentGrant, busAuthFromConfig, type RuntimeBusAuth } from './bus/auth/index.ts';
import { Scheduler } from './scheduler.ts';
import { toClock, type Clock, type TimerHandle } from './time/clock.ts';
import { preflightStateDir, StateDirFootprint } from './boot-guard.ts';
import { acquireStateLock, type StateLock } from './state-lock.ts';
import { RunFeed } from './run-feed.ts';
import { logRunEvent, logRunResumed, logSandbox } from './run-log.ts';
import type { RunFeedListener } from './events.ts';
import { approveWithGrant, GrantNotEligibleError, type GrantScope } from './approvals/approve-with-grant.ts';
import { confinementOf, type SandboxStatus } from './sandbox/index.ts';
import { Inspector, type ActorEvent, type ActorTreeSnapshot } from './inspect/index.ts';
import { GoalHost } from './goals/goal-host.ts';
import { createGoalExecutors } from '../actors/tools/goal.ts';
import { GOAL_SURFACE, withGoalTools } from '../policy/goal-tools.ts';
import type { GoalAction, GoalControl, GoalRecord, IterationRecord } from '../store/index.ts';
import { PlatformHost } from './platforms/host.ts';
import { startClusterFromConfig, type ClusterNode } from './cluster/index.ts';
import { preflightPlatformTokens } from './platforms/preflight.ts';

export { RUNTIME_FILE };

/** The workspace roots of a config (before the runtime's authority state exists). */
function configRoots(loaded: LoadedConfig): WorkspaceRoot[] {
  return loaded.config.workspace.roots.map((r) => ({
    ...r,
    primary: r.primary ?? false,
    source: r.source ?? 'workspace',
  }));
}

/** Default budgets of a run when the agent's config sets none. */
export const DEFAULT_BUDGET = { modelCalls: 50, toolCalls: 100, wallTimeMs: 10 * 60_000 } as const;

/** The log levels a runtime accepts. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How long a recorded firing whose run does not exist yet counts as on its way (then as lost). */
const FIRING_START_GRACE_MS = 5 * 60_000;

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

/** Lifetime of an agent actor's bus credentials under per-actor auth. */
const ACTOR_CREDENTIAL_TTL_MS = 60 * 60_000;

/** How a headless run is started (`submit`). */
export interface SubmitOptions {
  readonly sessionId?: string;
  /** The task the run belongs to (owner of its standing approvals); null by default. */
  readonly taskId?: string | null;
  readonly interaction?: Interaction;
  /** The surface name recorded with the run (default `cli`). */
  readonly surface?: string;
}

export { GrantNotEligibleError, type GrantScope };
export type { GoalAction, GoalControl, GoalRecord, IterationRecord };

/** A pending approval as a surface sees it (attended: inline; unattended: in the Inbox). */
export type ApprovalListener = (approval: ApprovalRecord, interaction: Interaction) => void;

const noSecrets: SecretResolver = {
  resolve: async (name) => {
    throw Object.assign(
      new Error(`no secret store is configured; secret ${JSON.stringify(name)} cannot be resolved`),
      {
        code: 'secret_store_unavailable',
      },
    );
  },
};

/**
 * Starts the embedded nats-server (when no bus target is configured), connects and opens the
 * JetStream agent queue. A step that fails undoes the steps before it, so a rejected promise
 * leaves nothing running.
 */
async function openBus(
  configured: BusTarget | null,
  busAuth: RuntimeBusAuth | null,
  stateDir: string,
  logger: Logger,
): Promise<{ nats: EmbeddedNats | null; bus: Bus<RuntimeKinds>; queue: AgentQueue }> {
  const nats =
    configured === null
      ? await startEmbeddedNats({
          stateDir,
          logger,
          ...(busAuth === null
            ? {}
            : { auth: { configLines: busAuth.configLines ?? [], credentials: busAuth.gateway } }),
        })
      : null;
  let bus: Bus<RuntimeKinds> | null = null;
  try {
    bus = await connectBus({
      target:
        configured === null
          ? (nats as EmbeddedNats).target()
          : busAuth === null
            ? configured
            : { url: configured.url, credentials: busAuth.gateway },
      kinds: RUNTIME_KINDS,
      source: 'runtime',
      logger,
    });
    const queue = await AgentQueue.open(bus.nats, logger);
    return { nats, bus, queue };
  } catch (err) {
    await bus?.close().catch(() => {});
    await nats?.stop();
    throw err;
  }
}

/**
 * The Snotra runtime: store, bus, policy, agents, runs and approvals wired together. Start it
 * with `Runtime.start`; stop it with `stop()`. At start it restores every run that was not
 * finished, re-arms approval deadlines and resumes runs whose decision arrived while it was down.
 */
export class Runtime {
  readonly #agents = new Map<string, Actor<typeof agentMachine>>();
  readonly #waiters = new Map<string, (outcome: RunOutcome) => void>();
  readonly #approvalListeners = new Set<ApprovalListener>();
  readonly #abort = new AbortController();
  #syncTimer: TimerHandle | null = null;
  #stopSchedules: () => void = () => {};
  #control: { close: () => Promise<void> } | null = null;
  #stopped = false;
  #lock: StateLock | null = null;
  #authority!: AuthorityState;
  #delegation!: Delegation;
  #feed!: RunFeed;
  #inspector!: Inspector;
  #read!: ReadModels;
  #goals!: GoalHost;
  readonly #goalListeners = new Set<(goal: GoalRecord) => void>();
  #platforms!: PlatformHost;
  /** Per-actor bus auth (`bus.auth: "per-actor"`): each agent actor's own connection, by agent id. */
  readonly #actorBuses = new Map<string, Promise<Bus<RuntimeKinds>>>();
  #actorBusFactory: ActorBusFactory<RuntimeKinds> | null = null;
  #cluster: ClusterNode | null = null;
  /** Each agent's consumer handler of its messages (see `send`). */
  readonly #localHandlers = new Map<string, (message: Omit<AgentMessage, 'type'>) => Promise<Verdict>>();

  private constructor(
    readonly loaded: LoadedConfig,
    readonly store: Store,
    readonly bus: Bus<RuntimeKinds>,
    readonly queue: AgentQueue,
    private readonly tools: DefaultTools | null,
    private readonly nats: EmbeddedNats | null,
    readonly registry: ToolRegistry,
    readonly policyEnv: PolicyEnvironment,
    readonly runs: RunHost,
    readonly approvals: ApprovalService,
    readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /**
   * Starts a runtime on a config; see the class doc for what happens at boot. All or nothing:
   * it first takes the state dir's lock (`StateDirLockedError` when another runtime holds it,
   * before anything is touched); any later failure stops what was started, removes what this
   * start added to the state dir, releases the lock and rethrows.
   */
  static async start(options: RuntimeOptions): Promise<Runtime> {
    const stateDir = options.loaded.config.stateDir;
    preflightStateDir(stateDir);
    const footprint = StateDirFootprint.take(stateDir);
    let lock: StateLock;
    try {
      lock = acquireStateLock(stateDir);
    } catch (err) {
      // Held by another runtime: touch nothing of its state dir (only a folder this start made).
      footprint.undoCreatedDir();
      throw err;
    }
    const undo: (() => Promise<void> | void)[] = [];
    try {
      const rt = await Runtime.#boot(options, undo);
      rt.#lock = lock;
      return rt;
    } catch (err) {
      for (const step of undo.reverse()) {
        try {
          await step();
        } catch {
          // Keep tearing down: the boot error is the one to report.
        }
      }
      footprint.undo();
      lock.release(true);
      throw err;
    }
  }

  static async #boot(options: RuntimeOptions, undo: (() => Promise<void> | void)[]): Promise<Runtime> {
    const { loaded } = options;
    // One clock for the whole runtime: components with timers get the Clock, the others its `now`.
    const clock = toClock(options.clock);
    const now = (): number => clock.now();
    const stateDir = loaded.config.stateDir;
    const redactor = new Redactor();
    const logger = createLogger(redactor, (options.logDestination ?? process.stderr) as never, {
      name: 'snotra',
      level: options.logLevel ?? 'info',
    });
    // Every secret value it can know of is registered before anything can persist or show one.
    await registerKnownSecrets(loaded.config, options.secretStore, redactor);
    // Secrets and bus target first: a config that cannot connect writes nothing.
    const configured =
      options.busTarget ?? (await busTargetFromConfig(loaded, options.secretStore, redactor));
    // Per-actor bus auth (bus.auth "per-actor"): its keys, or its signing key by secret reference.
    const busAuth = await busAuthFromConfig(loaded, options.secretStore, redactor);
    if (options.platforms === true) await preflightPlatformTokens(loaded, options.secretStore, redactor);
    // The bus comes up (embedded server start, connect, JetStream stream) while the store opens
    // and the policy environment is built: nothing below needs it until the queue is used.
    const busReady = openBus(configured, busAuth, stateDir, logger);
    busReady.catch(() => {}); // Awaited below; handled here so an early failure is not unhandled.
    undo.push(async () => {
      const opened = await busReady.catch(() => null);
      if (opened === null) return;
      await opened.bus.close();
      await opened.nats?.stop();
    });
    const store = openStore({ path: join(stateDir, 'snotra.db'), redactor, clock: now });
    undo.push(() => store.close());
    const registry = registryFromConfig(loaded);
    const policyEnv = await createPolicyEnvironment(
      loaded,
      options.detectSandbox ? { detectSandbox: options.detectSandbox } : {},
    );
    logSandbox(logger, policyEnv.sandbox);
    const secrets: SecretResolver = options.secretStore
      ? createSecretResolver(options.secretStore, store.redactor)
      : noSecrets;
    let runtime: Runtime | null = null;
    // The MCP client library loads only when servers are configured.
    const createMcpHost =
      options.executors === undefined && Object.keys(loaded.config.mcp.servers).length > 0
        ? (await import('./mcp/host.ts')).createRuntimeMcpHost
        : null;
    const tools: DefaultTools | null =
      options.executors === undefined
        ? createDefaultTools({
            allowPrivateHosts: loaded.config.http.allowPrivateHosts,
            sandbox: policyEnv.sandboxBackend,
            mcp: {
              createHost: createMcpHost,
              config: loaded.config,
              registry,
              secrets,
              redactor: store.redactor,
              roots: () => (runtime === null ? configRoots(loaded) : runtime.#roots()),
              onStatus: (s) => {
                if (s.state === 'crashed')
                  logger.warn({ mcpServer: s.id, error: s.lastError }, 'MCP server stopped');
                else logger.info({ mcpServer: s.id, state: s.state, tools: s.tools }, 'MCP server status');
              },
            },
          })
        : null;
    if (tools !== null) undo.push(() => tools.close());
    const { nats, bus, queue } = await busReady;
    // Cluster mode (node.id): checks the server and takes this node's lease before any run starts.
    const cluster = await startClusterFromConfig(loaded, bus.nats, store, clock, logger);
    if (cluster !== null) undo.push(() => cluster.close());
    const inspector = new Inspector();
    const runs = new RunHost(
      store,
      {
        onStarted: (input) => {
          if (runtime !== null) runtime.#feed.started(input);
        },
        onRestored: (input) => logRunResumed(logger, input),
        onStatus: (runId, status, ctx) => {
          cluster?.runStatus(runId, status);
          if (runtime !== null) runtime.#onRunStatus(runId, status, ctx);
        },
        onEnded: (runId, outcome, ctx) => {
          if (runtime !== null) runtime.#onRunEnded(runId, outcome, ctx);
        },
      },
      clock,
      undefined,
      (runId, s, e) => inspector.onRunSnapshot(runId, s, e),
    );
    const approvals = new ApprovalService(
      store,
      {
        deliver: (a) => runs.deliver(a),
        opening: (a) => a.runId !== null && runs.isLive(a.runId),
        resolved: (a) => {
          if (runtime !== null) runtime.#feed.approvalResolved(a);
          inspector.approvalResolved(a);
          if (a.status !== 'pending') {
            runtime?.bus.publish(subject('approval', a.id, 'resolved'), 'approval.resolved', {
              approvalId: a.id,
              runId: a.runId,
              status: a.status,
            });
          }
        },
      },
      clock,
      cluster?.gate,
    );
    runtime = new Runtime(
      loaded,
      store,
      bus,
      queue,
      tools,
      nats,
      registry,
      policyEnv,
      runs,
      approvals,
      logger,
      clock,
    );
    const rt = runtime;
    rt.#inspector = inspector;
    if (busAuth !== null) {
      const factory = new ActorBusFactory({
        minter: busAuth.minter,
        url: nats?.url ?? (configured as BusTarget).url,
        kinds: RUNTIME_KINDS,
        audit: store.audit,
        logger,
        // Short-lived: re-granted (fresh JWT, reconnect) every 45 minutes, never reaching expiry.
        ttlMs: ACTOR_CREDENTIAL_TTL_MS,
      });
      rt.#actorBusFactory = factory;
      queue.pullOn((agentId) => rt.#agentBus(factory, agentId).then((b) => b.nats));
    }
    rt.#cluster = cluster;
    // From here on, tearing down is the runtime's own stop (agents, runs, timers, socket).
    undo.length = 0;
    undo.push(() => rt.stop());
    const details = {
      registry,
      redactor: store.redactor,
      primaryRoot: () => rt.#roots().find((r) => r.primary)?.path ?? null,
    };
    rt.#feed = new RunFeed(details, now, logger);
    rt.#feed.on((e) => logRunEvent(logger, e));
    if (options.onRunEvent !== undefined) rt.#feed.on(options.onRunEvent);
    rt.#authority = new AuthorityState(loaded, registry, store);
    rt.#read = new ReadModels({
      ...details,
      store,
      loaded,
      mode: (agentId) => rt.#authority.mode(agentId),
      contextOf: (runId) => runs.contextOf(runId),
      sandbox: policyEnv.sandbox,
    });
    rt.#delegation = new Delegation(
      loaded,
      store,
      registry,
      policyEnv,
      rt.#authority,
      runs,
      (id) => rt.waitForRun(id),
      now,
    );
    rt.#goals = new GoalHost({
      store,
      clock: now,
      goals: loaded.config.surfaces.goalLoops,
      agentBudget: (agentId) => ({ ...DEFAULT_BUDGET, ...loaded.config.agents[agentId]?.budget }),
      startRun: (agentId, messageId, text) =>
        rt.send(agentId, {
          messageId,
          sessionId: makeSessionId('goal', parseIterationMessageId(messageId)?.goalId ?? messageId),
          taskId: makeSessionId('goal', parseIterationMessageId(messageId)?.goalId ?? messageId),
          parentRunId: null,
          surface: GOAL_SURFACE,
          interaction: 'unattended',
          text,
        }),
      cancelRun: (runId, reason) => runs.cancel(runId, reason),
      runContext: (runId) => runs.contextOf(runId),
      log: (level, fields, msg) => logger[level](fields, msg),
      onChange: (goal) => {
        for (const l of rt.#goalListeners) l(goal);
      },
      inspect: (goalId, e) => inspector.onGoalInspection(goalId, e),
    });
    rt.#platforms = new PlatformHost({
      store,
      platforms: loaded.config.surfaces.platforms,
      secrets,
      logger,
      send: (agentId, message) => rt.send(agentId, message),
      waitForRun: (runId) => rt.waitForRun(runId),
    });
    const executors = withMcpExecutors(
      {
        spawn_agent: createSpawnAgentExecutor(rt.#delegation),
        ...createGoalExecutors(rt.#goals),
        ...(options.executors ?? tools?.executors ?? {}),
        ...options.executorOverrides,
      },
      tools?.mcp ?? null,
    );
    // MCP servers start at boot (their tools are in the catalog before any run resumes); one that
    // fails is reported and retried with backoff, and the runtime starts anyway.
    await tools?.mcp?.start();
    runs.setMachine(
      provideRunMachine({
        store,
        model: options.model,
        registry,
        executors,
        clock: now,
        approvalTtlMs: options.approvalTtlMs ?? loaded.config.approvals.ttlMs ?? 24 * 60 * 60_000,
        policyFor: (ctx) => rt.#policyFor(ctx),
        contextFor: (runId) => ({
          ...rt.#scopeOf(runId),
          paths: policyEnv.paths,
          signal: rt.#abort.signal,
          secrets,
        }),
        observe: (outcome) => toObservation(outcome, store.redactor),
        runMeta: (runId) => rt.#runMeta(runId),
        onApprovalOpened: (approval, ctx) => rt.#onApprovalOpened(approval, ctx),
        replaying: (runId) => runs.wasRestored(runId),
        persistRun: (runId, settled) => runs.persistCurrent(runId, settled),
        report: rt.#feed,
        ...(cluster === null ? {} : { claims: cluster.claims }),
      }),
    );
    writeFileSync(
      join(stateDir, RUNTIME_FILE),
      JSON.stringify({ pid: process.pid, startedAt: clock.now() }),
      {
        mode: 0o600,
      },
    );
    if (cluster === null) rmSync(join(stateDir, CLUSTER_FILE), { force: true });
    else
      writeFileSync(
        join(stateDir, CLUSTER_FILE),
        JSON.stringify({ nodeId: loaded.config.node?.id ?? null }),
        {
          mode: 0o600,
        },
      );
    await rt.#resume(options.syncIntervalMs ?? 1000);
    await cluster?.attach(rt);
    return rt;
  }

  /** This runtime as a node of a cluster (`node.id` in config), or null on a single node. */
  get cluster(): ClusterNode | null {
    return this.#cluster;
  }

  /** What surfaces read: typed, redacted views of agents, approvals, runs, audit and goals. */
  get read(): ReadModels {
    return this.#read;
  }

  /** The MCP client host (configured servers, their status and tools), or null when none is configured. */
  get mcp(): McpHost | null {
    return this.tools?.mcp ?? null;
  }

  /** Sends a chat message (attended) to an agent and resolves with the run's outcome. */
  async chat(
    agentId: string,
    text: string,
    opts: { sessionId?: string; interaction?: Interaction } = {},
  ): Promise<{ runId: string; outcome: RunOutcome }> {
    const messageId = randomUUID();
    const runId = makeRunId(agentId, messageId);
    const done = new Promise<RunOutcome>((resolve) => this.#waiters.set(runId, resolve));
    await this.send(agentId, {
      messageId,
      sessionId: opts.sessionId ?? makeSessionId('chat', messageId),
      taskId: null,
      parentRunId: null,
      surface: 'chat',
      interaction: opts.interaction ?? 'attended',
      text,
    });
    return { runId, outcome: await done };
  }

  /**
   * Starts an unattended run for a task (scheduled or triggered). Resolves with the run id once
   * the message is durable (see `send`); the run parks in the Inbox whenever it needs a human.
   * The run may have started, even taken steps, before this resolves, and it is restored after a
   * crash either way: a caller that must not start a task twice (a retry after a crash) passes
   * its own `messageId` — the same `messageId` starts at most one run, however often it is sent.
   */
  async runTask(
    agentId: string,
    taskId: string,
    text: string,
    opts: { messageId?: string } = {},
  ): Promise<string> {
    const messageId = opts.messageId ?? randomUUID();
    await this.send(agentId, {
      messageId,
      sessionId: makeSessionId('task', taskId),
      taskId,
      parentRunId: null,
      surface: 'scheduled',
      interaction: 'unattended',
      text,
    });
    return makeRunId(agentId, messageId);
  }

  /** Resolves when the run ends (or at once with its stored outcome when it already ended). */
  waitForRun(runId: string): Promise<RunOutcome> {
    // The status column first: a live or parked run's snapshot is not decoded to be waited on.
    const status = this.runs.isLive(runId) ? null : this.store.snapshots.statusOf(runId);
    const ended = status === 'completed' || status === 'failed' || status === 'denied';
    const stored = ended ? this.store.snapshots.get(runId) : null;
    if (
      stored !== null &&
      (stored.status === 'completed' || stored.status === 'failed' || stored.status === 'denied')
    ) {
      return Promise.resolve(storedOutcome(stored) ?? { status: stored.status, reason: 'stored' });
    }
    return new Promise((resolve) => {
      const prev = this.#waiters.get(runId);
      this.#waiters.set(runId, (o) => {
        prev?.(o);
        resolve(o);
      });
    });
  }

  /**
   * Publishes a message to an agent over the bus; resolves once it is durable. On one node
   * (no cluster, bus token mode) the agent's consumer is this process, so it is also handed the
   * message at once (see `AgentQueue.publishAndStart`): the run starts without waiting for the
   * round trip through nats-server, and the delivery that follows finds the run and acknowledges
   * it. When the agent is at its run cap, or another node may take the message, it goes by the
   * bus alone and resolves once JetStream has stored it.
   */
  async send(agentId: string, message: Omit<AgentMessage, 'type'>): Promise<void> {
    const agent = this.#agents.get(agentId);
    if (agent === undefined) throw new Error(`unknown agent ${JSON.stringify(agentId)}`);
    const local = this.#localHandlers.get(agentId);
    const { liveRuns, maxConcurrentRuns } = agent.getSnapshot().context;
    if (
      local === undefined ||
      this.#cluster !== null ||
      this.#actorBusFactory !== null ||
      liveRuns.length >= maxConcurrentRuns
    ) {
      await this.queue.publish(agentId, message);
      return;
    }
    await this.queue.publishAndStart(agentId, message, local);
    // Started here: resolved once its first state is stored too (a caller may read it at once).
    const runId = makeRunId(agentId, message.messageId);
    if (this.runs.isLive(runId)) await this.runs.stored(runId);
  }

  /**
   * A human decision from an authenticated in-process surface. Single use; says why when it
   * changes nothing. A denial's `reason` reaches the model in its `tool.denied` observation.
   */
  decide(approvalId: string, decision: ApprovalDecision, user: string, reason?: string): DecideResult {
    this.#refuseLocalDecisionInCluster('decide');
    return this.approvals.decide(approvalId, decision, user, reason);
  }

  /**
   * Cluster mode: a decision written to this node's store alone would not be single use across
   * nodes (another node could decide the same request through the shared Inbox), so the
   * synchronous forms refuse; `decideAsync` decides through the cluster.
   */
  #refuseLocalDecisionInCluster(what: 'decide' | 'approveWithGrant'): void {
    if (this.#cluster === null) return;
    throw new ClusterDecisionError(
      what === 'decide'
        ? `this runtime is cluster node ${JSON.stringify(this.#cluster.nodeId)}: decide with decideAsync, which decides once across the cluster`
        : `this runtime is cluster node ${JSON.stringify(this.#cluster.nodeId)}: session and standing approvals are kept by one node, so only "once" decisions (decideAsync) are taken in cluster mode`,
    );
  }

  /**
   * `decide` that resolves once the decision is on stable storage; decisions made at the same
   * time share one fsync (group commit) instead of each blocking the event loop for its own.
   * The surfaces (sidecar) decide through it.
   */
  decideAsync(
    approvalId: string,
    decision: ApprovalDecision,
    user: string,
    reason?: string,
  ): Promise<DecideResult> {
    // Cluster mode: single use across nodes (a CAS in the shared Inbox), so the caller is told
    // what won, whichever node it asked.
    if (this.#cluster !== null) return this.#cluster.decide(approvalId, decision, user, reason);
    return this.approvals.decideAsync(approvalId, decision, user, reason);
  }

  /**
   * Approves a pending request and, in the same transaction, grants what the human chose: a
   * session approval (`session`) or a standing approval for the exact target owned by the
   * run's task (`standing`). Eligibility and targets come from the tool's metadata and the
   * call as the run holds it (grant-options.ts), never from the surface; an ineligible scope
   * throws GrantNotEligibleError and decides nothing.
   */
  approveWithGrant(approvalId: string, scope: GrantScope, user: string): DecideResult {
    this.#refuseLocalDecisionInCluster('approveWithGrant');
    return approveWithGrant(
      {
        store: this.store,
        registry: this.registry,
        approvals: this.approvals,
        contextOf: (id) => this.runs.contextOf(id),
        clock: () => this.clock.now(),
      },
      approvalId,
      scope,
      user,
    );
  }

  /**
   * Starts a run from a surface and returns its id once the message is on the bus (the run's
   * events reach `onRunEvent` listeners; `waitForRun` resolves with its outcome).
   */
  async submit(agentId: string, text: string, opts: SubmitOptions = {}): Promise<string> {
    const messageId = randomUUID();
    const runId = makeRunId(agentId, messageId);
    await this.send(agentId, {
      messageId,
      sessionId: opts.sessionId ?? makeSessionId('cli', messageId),
      taskId: opts.taskId ?? null,
      parentRunId: null,
      surface: opts.surface ?? 'cli',
      interaction: opts.interaction ?? 'attended',
      text,
    });
    return runId;
  }

  /** Platform replies (surfaces.platforms): journals, pairing and runs for the platform gateways. */
  get platforms(): PlatformHost {
    return this.#platforms;
  }

  /** Listens to the live run feed (runtime/events.ts): redacted events of every run. Returns the removal. */
  onRunEvent(listener: RunFeedListener): () => void {
    return this.#feed.on(listener);
  }

  /** The live actor tree (agents → runs → sub-agent runs → approvals), redacted of everything but ids, states and budgets. */
  actors(): ActorTreeSnapshot {
    return this.#inspector.snapshot();
  }

  /** Listens to the changes of the live actor tree (`actor.*` events); returns the removal. */
  onActorEvent(listener: (e: ActorEvent) => void): () => void {
    return this.#inspector.on(listener);
  }

  /** Listens for approvals that need a human (attended: inline; unattended: already in the Inbox). */
  onApproval(listener: ApprovalListener): () => void {
    this.#approvalListeners.add(listener);
    return () => this.#approvalListeners.delete(listener);
  }

  /** Stops agents, parks live runs (snapshots persisted), closes the bus, the server and the store; releases the state dir. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#abort.abort();
    if (this.#syncTimer) this.clock.clearInterval(this.#syncTimer);
    this.#stopSchedules();
    this.#goals?.stop();
    for (const a of this.#agents.values()) a.stop();
    await this.#cluster?.stopWork();
    await this.queue.stop();
    for (const b of this.#actorBuses.values()) await b.then((x) => x.close()).catch(() => {});
    this.runs.stopAll();
    await this.tools?.close();
    this.approvals.stop();
    await this.#control?.close();
    await this.#cluster?.close();
    await this.bus.close().catch(() => {});
    await this.nats?.stop();
    rmSync(join(this.loaded.config.stateDir, RUNTIME_FILE), { force: true });
    this.store.close();
    this.#lock?.release();
  }

  async #resume(syncIntervalMs: number): Promise<void> {
    // Calls cut by a crash: never silently re-run (see executeOnce).
    this.store.ledger.markInterrupted();
    for (const agentId of Object.keys(this.loaded.config.agents)) this.#startAgent(agentId);
    this.#inspector.seedGoals(this.loaded.config.surfaces.goalLoops, this.store);
    const pending = this.store.approvals.listPending();
    this.#inspector.seed(this.store, pending);
    this.approvals.rearm(pending);
    void resumeBounded(
      this.#bootResumes(pending),
      RESUME_CONCURRENCY,
      (runId) => this.runs.whenSettled(runId),
      () => this.#stopped,
      (runId, err) => this.logger.error({ runId, err: (err as Error).message }, 'run not restored at boot'),
      RESUME_SLOT_MS,
      this.clock,
    );
    const redact = <T>(v: T): T => this.store.redactor.redact(v) as T;
    this.#control = await startControlSocket(
      this.loaded.config.stateDir,
      (m) => (m.type === 'goal_control' ? this.#goals.applyControls() : this.approvals.sync(m.id)),
      {
        actors: { snapshot: () => redact(this.actors()), on: (l) => this.onActorEvent((e) => l(redact(e))) },
      },
    );
    this.#syncTimer = this.clock.setInterval(() => {
      this.approvals.syncAll();
      this.#goals.applyControls();
    }, syncIntervalMs);
    const scheduler = new Scheduler(this.loaded.config.surfaces.scheduled, {
      journal: this.store.schedule,
      clock: this.clock,
      start: async (task, messageId) => {
        await this.runTask(task.agent, task.id, task.message, { messageId });
      },
      runActive: (firing) => this.#firingActive(firing),
      log: (level, fields, msg) => this.logger[level](fields, msg),
    });
    scheduler.start();
    this.#stopSchedules = () => scheduler.stop();
    // Goals last: their runs were restored above; requests made while down are applied now.
    this.#goals.start();
  }

  /**
   * The runs to bring back at boot: every unfinished run except those parked on a pending
   * approval. A parked run is loaded lazily: it stays listed, in the Inbox and on its approval's
   * deadline (re-armed above), and its snapshot is read only when its decision, expiry or a
   * cancel arrives (`RunHost.deliver` / `cancel` restore it then). A run waiting on an approval
   * decided while the runtime was down gets its decision delivered; interrupted runs are restored.
   */
  #bootResumes(pending: readonly ApprovalRecord[]): BootResume[] {
    const pendingRuns = new Set<string>();
    for (const a of pending) if (a.runId !== null) pendingRuns.add(a.runId);
    const items: BootResume[] = [];
    for (const run of this.store.snapshots.listUnfinished()) {
      // Cluster mode: a run another node took over stays with that node.
      if (this.#cluster !== null && !this.#cluster.mayRestore(run.runId)) continue;
      if (run.status !== 'waiting_for_approval') {
        items.push({ runId: run.runId, go: () => this.runs.restore(run.runId) });
        continue;
      }
      // A run waits on one approval at a time (its id is derived from the run and the call):
      // a pending one means the run stays parked until a decision, unloaded.
      if (pendingRuns.has(run.runId)) continue;
      items.push({
        runId: run.runId,
        go: () => {
          const ctx = this.runs.contextOf(run.runId);
          const approval = ctx?.approvalId ? this.store.approvals.get(ctx.approvalId) : null;
          if (approval === null || approval.status === 'pending') return false;
          this.#feed.approvalResolved(approval);
          this.runs.deliver(approval);
          return true;
        },
      });
    }
    return items;
  }

  /**
   * A human's request for a goal (`start`, `pause`, `resume`, `cancel`) from an authenticated
   * in-process surface: recorded durably, applied at once; returns the applied request (its
   * `result` is `ok` or why it changed nothing). No model-facing path reaches this.
   */
  controlGoal(goalId: string, action: GoalAction, by: string): GoalControl {
    const seq = this.store.goals.requestControl(goalId, action, by);
    this.#goals.applyControls();
    return this.store.goals.control(seq) as GoalControl;
  }

  /** Listens to changes of every goal's stored state (status, iteration, usage). Returns the removal. */
  onGoalChange(listener: (goal: GoalRecord) => void): () => void {
    this.#goalListeners.add(listener);
    return () => this.#goalListeners.delete(listener);
  }

  /** Every configured goal with its stored state (null when never started), and its iterations. */
  goals(): { id: string; agent: string; record: GoalRecord | null; iterations: IterationRecord[] }[] {
    return this.loaded.config.surfaces.goalLoops.map((g) => {
      const record = this.store.goals.get(g.id);
      return {
        id: g.id,
        agent: g.agent,
        record,
        iterations: record === null ? [] : this.store.goals.iterations(g.id, record.epoch),
      };
    });
  }

  /** Whether a scheduled firing's run still goes on (or is on its way: recorded, not yet created). */
  #firingActive(firing: FiringRecord): boolean {
    if (firing.runId === null) return false;
    if (this.runs.isLive(firing.runId)) return true;
    const status = this.store.snapshots.get(firing.runId)?.status;
    if (status === undefined) return this.clock.now() - firing.recordedAt < FIRING_START_GRACE_MS;
    return status !== 'completed' && status !== 'failed' && status !== 'denied';
  }

  #startAgent(agentId: string): void {
    const actor = createActor(
      agentMachine.provide({
        actions: {
          // Deferred: creating an actor inside another actor's action is not allowed in XState.
          startRun: (_, { message, runId }) => queueMicrotask(() => this.#startRun(agentId, message, runId)),
          refuse: (_, { message, reason }) =>
            this.logger.warn({ agentId, messageId: message.messageId, reason }, 'message refused'),
        },
      }),
      { input: { agentId, maxConcurrentRuns: 16 }, inspect: (e) => this.#inspector.onAgentInspection(e) },
    ).start();
    this.#agents.set(agentId, actor);
    const handle = async (message: Omit<AgentMessage, 'type'>): Promise<Verdict> => {
      const runId = makeRunId(agentId, message.messageId);
      if (this.runs.isLive(runId) || this.store.snapshots.has(runId)) return 'ack';
      const refusedBefore = actor.getSnapshot().context.refused;
      actor.send({ type: 'MESSAGE', ...message });
      if (actor.getSnapshot().context.refused > refusedBefore) return 'nak';
      // The run starts in a microtask; acknowledge only once its first snapshot is stored.
      await new Promise((r) => setImmediate(r));
      if (this.runs.isLive(runId)) return (await this.runs.stored(runId)) ? 'ack' : 'nak';
      return this.store.snapshots.has(runId) ? 'ack' : 'nak';
    };
    this.#localHandlers.set(agentId, handle);
    const consuming = this.queue.consume(agentId, handle);
    consuming.catch((err: unknown) => {
      if (!this.#stopped)
        this.logger.error({ agentId, err: (err as Error).message }, 'agent message consumer failed');
    });
  }

  /**
   * An agent actor's own bus connection (per-actor auth), minted once from its grant: its agent
   * subjects, its inbox, its consumer (see `bus/auth/grants.ts`); violations are audited.
   */
  #agentBus(factory: ActorBusFactory<RuntimeKinds>, agentId: string): Promise<Bus<RuntimeKinds>> {
    let bus = this.#actorBuses.get(agentId);
    if (bus === undefined) {
      bus = factory.connect(
        { agentId, name: `actor-agent-${agentId}` },
        agentGrant(agentId, { mode: this.#authority.mode(agentId) }),
      );
      this.#actorBuses.set(agentId, bus);
    }
    return bus;
  }

  /** An agent actor's own bus connection under per-actor auth; null in token mode or before it connected. */
  async actorBus(agentId: string): Promise<Bus<RuntimeKinds> | null> {
    return (await this.#actorBuses.get(agentId)) ?? null;
  }

  #startRun(agentId: string, message: AgentMessage, runId: string): void {
    const def = this.loaded.config.agents[agentId];
    this.runs.start({
      runId,
      agentId,
      sessionId: message.sessionId,
      taskId: message.taskId,
      parentRunId: message.parentRunId,
      surface: message.surface,
      interaction: message.interaction,
      message: message.text,
      // A goal iteration runs on what its goal has left (recorded with the iteration); a platform
      // message within its turn cap.
      budget: this.#platforms.limitBudget(
        message,
        (message.surface === GOAL_SURFACE ? this.#goals.budgetFor(runId) : null) ?? {
          ...DEFAULT_BUDGET,
          ...def?.budget,
        },
      ),
      startedAt: this.clock.now(),
    });
  }

  #policyFor(ctx: RunContext) {
    const policy = this.#basePolicy(ctx);
    // The goal tools exist in goal runs only.
    const goalRun = ctx.surface === GOAL_SURFACE && ctx.parentRunId === null;
    return { ...policy, tools: withGoalTools(goalRun, policy.tools, this.registry.names()) };
  }

  #basePolicy(ctx: RunContext) {
    const child = this.#delegation.childPolicy(ctx);
    if (child !== null) return child;
    const base = agentPolicyContext(this.loaded, ctx.agentId, {
      registry: this.registry,
      paths: this.policyEnv.paths,
      shell: this.policyEnv.shell,
      sandboxed: this.policyEnv.sandbox.name !== 'none',
      interaction: ctx.interaction,
      sessionId: ctx.sessionId,
      taskId: ctx.taskId,
      // Only this agent's: a grant given on one agent's card never covers another agent of the session.
      sessionApprovals: this.store.sessionApprovals.listActiveFor(ctx.sessionId, ctx.agentId),
      standingApprovals: ctx.taskId === null ? [] : this.store.standingApprovals.listActive(ctx.taskId),
    });
    // Roots and mode as they are now: a change applies to the next call at once.
    return { ...base, mode: this.#authority.mode(ctx.agentId), roots: this.#authority.roots() };
  }

  /** Replaces the workspace roots while running (a human's change); live runs and their sub-agents shrink at once. Audited. */
  setRoots(roots: readonly WorkspaceRoot[], by: string): void {
    this.#authority.setRoots(roots, by);
  }

  /** Changes an agent's mode while running; its live sub-agents follow at once. Audited. */
  setAgentMode(agentId: string, mode: Mode, by: string): void {
    this.#authority.setMode(agentId, mode, by);
    // Per-actor bus auth: the agent actor's connection gets the grant of its new envelope.
    const factory = this.#actorBusFactory;
    const bus = this.#actorBuses.get(agentId);
    if (factory !== null && bus !== undefined) {
      bus
        .then((b) => factory.regrant(b, agentGrant(agentId, { mode })))
        .catch((err: unknown) => {
          if (!this.#stopped)
            this.logger.error({ agentId, err: (err as Error).message }, 'agent bus re-grant failed');
        });
    }
  }

  #roots() {
    return this.#authority.roots();
  }

  /**
   * A run's roots as they are now and what the OS sandbox of its children mounts: its own
   * envelope (a sub-agent's roots and access, not its parent's; the network only when the
   * envelope grants `external` risk).
   */
  #scopeOf(runId: string) {
    const ctx = this.runs.contextOf(runId);
    if (ctx === null) {
      const roots = this.#roots();
      // Not a live run: its roots, and no network.
      const confinement = {
        roots: roots.map((r) => ({ path: r.path, access: r.access, ...(r.deny ? { deny: r.deny } : {}) })),
        network: false,
      };
      return { roots, confinement };
    }
    const envelope = this.#delegation.envelopeOf(ctx);
    return { roots: envelope.roots, confinement: confinementOf(envelope, this.registry) };
  }

  #runMeta(runId: string) {
    // The live context when the run is live (no snapshot decoding on the hot path).
    const ctx = this.runs.contextOf(runId);
    return {
      sessionId: ctx?.sessionId ?? 'unknown',
      agentId: ctx?.agentId ?? 'unknown',
      surface: ctx?.surface ?? 'unknown',
    };
  }

  #onApprovalOpened(approval: ApprovalRecord, ctx: RunContext): void {
    // Found again already decided (a restart): tracking it delivers the decision.
    if (approval.status !== 'pending') {
      this.approvals.track(approval);
      return;
    }
    // Cluster mode: the request goes to the shared Inbox; the run parks once it is there.
    const published = this.#cluster?.approvalOpened(approval);
    try {
      this.#inspector.approvalOpened(approval, ctx.interaction);
      this.bus.publish(subject('approval', approval.id, 'requested'), 'approval.requested', {
        approvalId: approval.id,
        runId: approval.runId,
        agentId: approval.agentId,
        parentRunId: approval.parentRunId,
        tool: approval.tool,
        risk: approval.risk,
        reason: approval.reason,
        expiresAt: approval.expiresAt,
      });
      this.#feed.approvalRequested(approval, ctx);
      for (const l of this.#approvalListeners) l(approval, ctx.interaction);
    } finally {
      // Tracked once reported (a decision that came before the report reaches the run only
      // now), and tracked even when a report failed: its deadline is armed whatever happened.
      this.approvals.track(approval);
    }
    if (ctx.interaction === 'unattended') {
      // Park once the approval row is committed: the snapshot is persisted and the actor stopped.
      const park = (): void => {
        if (this.store.approvals.get(approval.id)?.status !== 'pending') return;
        // Ended meanwhile (cancelled or past its deadline while the approval was being synced).
        if (!this.runs.isLive(ctx.runId)) return;
        this.runs.park(ctx.runId);
        this.#feed.parked(ctx, approval.id);
        // A parked run holds no slot of its agent: other tasks may start while it waits.
        this.#agents.get(ctx.agentId)?.send({ type: 'RUN_ENDED', runId: ctx.runId });
      };
      if (published === undefined) setImmediate(park);
      else void published.then(park);
    }
  }

  #onRunStatus(runId: string, status: string, ctx: RunContext): void {
    if (this.#stopped) return;
    if (ctx.surface === GOAL_SURFACE) this.#goals.runStatus(runId, status);
    this.bus.publish(subject('run', runId, 'status'), 'run.status', {
      runId,
      agentId: ctx.agentId,
      status: status as 'running',
      ...(ctx.outcome ? { reason: ctx.outcome.reason } : {}),
    });
  }

  #onRunEnded(runId: string, outcome: RunOutcome, ctx: RunContext): void {
    this.#feed.ended(ctx, outcome);
    this.#inspector.runEnded(runId);
    // A run that ended while a request waited (a cancel, its deadline): the request leaves the Inbox.
    this.approvals.withdrawForRun(runId, `its run ended ${outcome.status} (${outcome.reason})`);
    this.#agents.get(ctx.agentId)?.send({ type: 'RUN_ENDED', runId });
    if (ctx.surface === GOAL_SURFACE && !this.#stopped) this.#goals.runEnded(runId, outcome, ctx);
    const waiter = this.#waiters.get(runId);
    this.#waiters.delete(runId);
    waiter?.(outcome);
  }
}
