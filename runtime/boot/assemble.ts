import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createSpawnAgentExecutor } from '../../actors/delegation/spawn-agent.ts';
import { provideRunMachine } from '../../actors/run/effects.ts';
import { createGoalExecutors } from '../../actors/tools/goal.ts';
import { toObservation } from '../../actors/tools/observation.ts';
import type { SecretResolver } from '../../actors/tools/types.ts';
import { makeSessionId, parseIterationMessageId } from '../../machines/run/run-id.ts';
import { GOAL_SURFACE } from '../../policy/goal-tools.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import { createLogger, openStore, Redactor, type GoalRecord, type Store } from '../../store/index.ts';
import type { AgentQueue } from '../agent-queue.ts';
import { AgentPool } from '../agents/agent-pool.ts';
import { ApprovalService } from '../approvals/approval-service.ts';
import { AuthorityState } from '../authority/authority-state.ts';
import { RunAuthority } from '../authority/run-authority.ts';
import { ActorBusFactory } from '../bus/auth/index.ts';
import { busAuthFromConfig } from '../config/adapters/bus-auth.ts';
import type { Bus, BusTarget, EmbeddedNats } from '../bus/index.ts';
import { publishResolved } from '../approvals/resolved-on-bus.ts';
import { NO_TRACE, type TraceOf } from '../bus/trace-headers.ts';
import type { Telemetry } from '../telemetry/start.ts';
import { busTargetFromConfig } from '../config/adapters/bus-target.ts';
import { removeClusterInbox, startClusterFromConfig, type ClusterNode } from '../cluster/index.ts';
import type { LoadedConfig } from '../config/load.ts';
import { Delegation } from '../delegation.ts';
import { GoalHost } from '../goals/goal-host.ts';
import { Inspector } from '../inspect/index.ts';
import { RUNTIME_KINDS, type RuntimeKinds } from '../messages.ts';
import { PlatformHost } from '../platforms/host.ts';
import { preflightPlatformTokens } from '../platforms/preflight.ts';
import { createPolicyEnvironment, type PolicyEnvironment } from '../policy/environment.ts';
import { registryFromConfig } from '../config/adapters/tool-registry.ts';
import { ReadModels } from '../read/read-models.ts';
import { RunFeed } from '../run-feed.ts';
import { logRunEvent, logRunResumed, logSandbox } from '../run-log.ts';
import { RunHost } from '../runs/run-host.ts';
import { RunRouter } from '../runs/run-router.ts';
import { RunWaiters } from '../runs/run-waiters.ts';
import { Compactor } from '../sessions/compact.ts';
import { createStepPreparer } from '../sessions/conversation.ts';
import { Sessions } from '../sessions/sessions.ts';
import { sessionsView, type SessionsView } from '../sessions/view.ts';
import { CLUSTER_FILE, RUNTIME_FILE } from '../runtime-file.ts';
import { createSecretResolver, registerKnownSecrets } from '../secrets/index.ts';
import { Checkpointer, mayChangeRoots, pruneCheckpoints } from '../checkpoints/index.ts';
import { toClock, type Clock } from '../time/clock.ts';
import { guardTimers } from '../time/guarded-clock.ts';
import { withMcpExecutors, type DefaultTools } from '../tools.ts';
import { Rewinds } from '../runs/rewinds.ts';
import { createTools } from './create-tools.ts';
import { openBus } from './open-bus.ts';
import type { Lifecycle } from './shutdown.ts';
import { ACTOR_CREDENTIAL_TTL_MS, DEFAULT_BUDGET, type RuntimeOptions } from './options.ts';

/** Everything a runtime is made of, assembled in dependency order (see `assemble`). */
export interface RuntimeParts {
  readonly loaded: LoadedConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly nats: EmbeddedNats | null;
  readonly bus: Bus<RuntimeKinds>;
  readonly queue: AgentQueue;
  readonly tools: DefaultTools | null;
  readonly registry: ToolRegistry;
  readonly policyEnv: PolicyEnvironment;
  readonly cluster: ClusterNode | null;
  readonly inspector: Inspector;
  readonly authority: AuthorityState;
  readonly feed: RunFeed;
  readonly runs: RunHost;
  readonly rewinds: Rewinds;
  readonly waiters: RunWaiters;
  readonly approvals: ApprovalService;
  readonly agents: AgentPool;
  readonly delegation: Delegation;
  readonly goals: GoalHost;
  readonly goalListeners: Set<(goal: GoalRecord) => void>;
  readonly platforms: PlatformHost;
  readonly router: RunRouter;
  readonly sessions: Sessions;
  readonly sessionsView: SessionsView;
  readonly read: ReadModels;
  readonly lifecycle: Lifecycle;
  /** A run's current trace context for the messages about it (none without telemetry). */
  readonly traceOf: TraceOf;
}

/**
 * Checks the options and builds every part of a runtime, each after what it needs: secrets and
 * the bus target first (a config that cannot connect writes nothing), the store, the bus coming
 * up while the policy environment and the tools are built, then the run host, each part that calls
 * it, and the router over them: every part is built after what it calls, and no callback holds a
 * part that does not exist yet. Each part that leaves something running pushes its teardown on
 * `lifecycle` as it is built (see `shutdown`). The run host is wired last (`RunHost.wire`), once every part its machine's effects and
 * its events call exists; no run starts before `assemble` returns.
 */
export async function assemble(options: RuntimeOptions, lifecycle: Lifecycle): Promise<RuntimeParts> {
  const { loaded } = options;
  // One clock for the whole runtime: components with timers get the Clock, the others its `now`.
  const given = toClock(options.clock);
  const now = (): number => given.now();
  const stateDir = loaded.config.stateDir;
  const redactor = new Redactor();
  const logger = createLogger(redactor, (options.logDestination ?? process.stderr) as never, {
    name: 'snotra',
    level: options.logLevel ?? 'info',
  });
  // Every secret value it can know of is registered before anything can persist or show one.
  await registerKnownSecrets(loaded.config, options.secretStore, redactor);
  // Secrets and bus target first: a config that cannot connect writes nothing.
  const configured = options.busTarget ?? (await busTargetFromConfig(loaded, options.secretStore, redactor));
  // Per-actor bus auth (bus.auth "per-actor"): its keys, or its signing key by secret reference.
  const busAuth = await busAuthFromConfig(loaded, options.secretStore, redactor);
  if (options.platforms === true) await preflightPlatformTokens(loaded, options.secretStore, redactor);
  const store = openStore({ path: join(stateDir, 'snotra.db'), redactor, clock: now });
  lifecycle.onStop('store', () => store.close());
  const clock = guardTimers(
    given,
    () => store.open,
    (err, kind) =>
      logger.error({ err: (err as Error).message ?? String(err), kind }, 'a runtime timer failed'),
  );
  // Written last (see `writeRuntimeFiles`) and removed just before the store closes; a boot that
  // failed before writing it leaves the state dir's file as it was.
  let runtimeFileWritten = false;
  lifecycle.onStop('runtime file', () => {
    if (runtimeFileWritten) rmSync(join(stateDir, RUNTIME_FILE), { force: true });
  });
  // The bus comes up (embedded server start, connect, JetStream stream) while the policy
  // environment and the tools are built: nothing below needs it until the queue is used.
  const busReady = openBus(configured, busAuth, stateDir, logger, loaded.config.bus.serverPath);
  busReady.catch(() => {}); // Awaited below; handled here so an early failure is not unhandled.
  lifecycle.onStop('bus', async () => {
    const opened = await busReady.catch(() => null);
    if (opened === null) return;
    await opened.bus.close().catch(() => {});
    await opened.nats?.stop();
  });
  const registry = registryFromConfig(loaded);
  const policyEnv = await createPolicyEnvironment(
    loaded,
    options.detectSandbox ? { detectSandbox: options.detectSandbox } : {},
  );
  logSandbox(logger, policyEnv.sandbox);
  // Without a store, `{ "env" }` references still resolve; `{ "secret" }` ones fail naming the fix.
  const secrets: SecretResolver = createSecretResolver(options.secretStore, store.redactor);
  const authority = new AuthorityState(loaded, registry, store);
  const tools = await createTools(options, { registry, policyEnv, secrets, store, authority, logger });
  if (tools !== null) lifecycle.onStop('tools', () => tools.close());
  const { nats, bus, queue } = await busReady;
  // Cluster mode (node.id): checks the server and takes this node's lease before any run starts.
  const cluster = await startClusterFromConfig(loaded, bus.nats, store, clock, logger);
  if (cluster !== null) lifecycle.onStop('cluster', () => cluster.close());
  const stopping = (): boolean => lifecycle.stopped;
  const inspector = new Inspector();
  const details = {
    registry,
    redactor: store.redactor,
    primaryRoot: () => authority.roots().find((r) => r.primary)?.path ?? null,
  };
  const feed = new RunFeed(details, now, logger);
  feed.on((e) => logRunEvent(logger, e));
  if (options.onRunEvent !== undefined) feed.on(options.onRunEvent);
  // OpenTelemetry (issue 39): its modules are imported only when the config has `telemetry`.
  let traceOf: TraceOf = NO_TRACE;
  let traceArrived: Telemetry['traceArrived'] | null = null;
  if (loaded.config.telemetry !== undefined) {
    const { startTelemetry } = await import('../telemetry/start.ts');
    const telemetry = await startTelemetry({
      telemetry: loaded.config.telemetry,
      agents: loaded.config.agents,
      secrets,
      store,
      clock: now,
    });
    feed.on(telemetry.listener);
    feed.onStepModel(telemetry.stepModel);
    ({ traceOf, traceArrived } = telemetry);
    lifecycle.onStop('telemetry', () => telemetry.stop());
  }
  // The run host first: every part below calls it. It is wired (its machine, who hears of its
  // runs) last, once every part those call exists; no run starts or is restored before.
  const runs = new RunHost(store, clock, undefined, (runId, s, e) => inspector.onRunSnapshot(runId, s, e));
  const waiters = new RunWaiters(runs, store);
  const waitForRun = (runId: string) => waiters.waitForRun(runId);
  const approvals = new ApprovalService(
    store,
    {
      deliver: (a) => runs.deliver(a),
      opening: (a) => a.runId !== null && runs.isLive(a.runId),
      resolved: (a, withdrawn) => {
        feed.approvalResolved(a);
        inspector.approvalResolved(a);
        // Cluster mode: a decision or expiry goes out from the node that wrote it to the shared Inbox.
        if (cluster === null || withdrawn === true)
          publishResolved(bus, a, a.runId === null ? null : traceOf(a.runId));
      },
    },
    clock,
    cluster?.gate,
  );
  lifecycle.onStop('approvals', () => approvals.stop());
  // Its agent actors start with the services, each given the router's `startRun` then.
  const agents = new AgentPool({
    queue,
    runs,
    store,
    logger,
    actorBusFactory:
      busAuth === null
        ? null
        : new ActorBusFactory({
            minter: busAuth.minter,
            url: nats?.url ?? (configured as BusTarget).url,
            kinds: RUNTIME_KINDS,
            audit: store.audit,
            logger,
            // Short-lived: re-granted (fresh JWT, reconnect) every 45 minutes, never reaching expiry.
            ttlMs: ACTOR_CREDENTIAL_TTL_MS,
          }),
    clustered: cluster !== null,
    mode: (agentId) => authority.mode(agentId),
    inspect: (e) => inspector.onAgentInspection(e),
    stopping,
    traceArrived,
  });
  lifecycle.onStop('agent buses', () => agents.closeBuses());
  const delegation = new Delegation(loaded, store, registry, policyEnv, authority, runs, waitForRun, now);
  const goalListeners = new Set<(goal: GoalRecord) => void>();
  const goals = new GoalHost({
    store,
    clock: now,
    goals: loaded.config.surfaces.goalLoops,
    agentBudget: (agentId) => ({ ...DEFAULT_BUDGET, ...loaded.config.agents[agentId]?.budget }),
    startRun: (agentId, messageId, text, after) => {
      const goalSession = makeSessionId('goal', parseIterationMessageId(messageId)?.goalId ?? messageId);
      // A later iteration joins the trace of the one before it: one trace per start of a goal.
      const trace = after === null ? null : traceOf(after);
      return agents.send(
        agentId,
        {
          messageId,
          sessionId: goalSession,
          taskId: goalSession,
          parentRunId: null,
          surface: GOAL_SURFACE,
          interaction: 'unattended',
          text,
        },
        trace,
      );
    },
    cancelRun: (runId, reason) => runs.cancel(runId, reason),
    runContext: (runId) => runs.contextOf(runId),
    log: (level, fields, msg) => logger[level](fields, msg),
    onChange: (goal) => {
      for (const l of goalListeners) l(goal);
    },
    inspect: (goalId, e) => inspector.onGoalInspection(goalId, e),
  });
  const platforms = new PlatformHost({
    store,
    platforms: loaded.config.surfaces.platforms,
    secrets,
    logger,
    clock,
    send: (agentId, message) => agents.send(agentId, message),
    waitForRun,
  });
  const sessions: Sessions = new Sessions({
    store,
    runs,
    workspace: () => details.primaryRoot() ?? '',
    logger,
    beforeMessage: (sessionId, agentId, text): Promise<void> =>
      compactor.beforeMessage(sessionId, agentId, text),
  });
  const compactor: Compactor = new Compactor({
    loaded,
    store,
    sessions,
    model: options.model,
    secrets,
    logger,
  });
  // Runs that ended without their append (a crash in between) are appended before any run starts.
  sessions.repair();
  const router = new RunRouter({
    loaded,
    store,
    sessions,
    bus,
    runs,
    waiters,
    approvals,
    feed,
    inspector,
    agents,
    goals,
    platforms,
    cluster,
    clock,
    stopping,
    traceOf: (runId) => traceOf(runId),
  });
  const runAuthority = new RunAuthority({ loaded, registry, policyEnv, store, authority, delegation, runs });
  const executors = withMcpExecutors(
    {
      spawn_agent: createSpawnAgentExecutor(delegation),
      ...createGoalExecutors(goals),
      ...(options.executors ?? tools?.executors ?? {}),
      ...options.executorOverrides,
    },
    tools?.mcp ?? null,
  );
  // MCP servers start at boot (their tools are in the catalog before any run resumes); one that
  // fails is reported and retried with backoff, and the runtime starts anyway.
  await tools?.mcp?.start();
  // Outside the sandbox, into the state dir it hides: a checkpoint before every call that can change a root.
  const checkpoints = new Checkpointer(stateDir, now);
  try {
    const pruned = pruneCheckpoints(checkpoints.store, now());
    if (pruned.removedCheckpoints > 0) logger.info(pruned, 'old checkpoints removed');
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'old checkpoints could not be pruned');
  }
  runs.wire(
    provideRunMachine({
      store,
      model: options.model,
      registry,
      executors,
      clock: now,
      approvalTtlMs: options.approvalTtlMs ?? loaded.config.approvals.ttlMs ?? 24 * 60 * 60_000,
      policyFor: (ctx) => runAuthority.policyFor(ctx),
      contextFor: (runId) => ({
        ...runAuthority.scopeOf(runId),
        paths: policyEnv.paths,
        signal: runs.signalOf(runId, lifecycle.abort.signal),
        secrets,
      }),
      observe: (outcome) => toObservation(outcome, store.redactor),
      runMeta: (runId) => router.runMeta(runId),
      onApprovalOpened: (approval, ctx) => router.approvalOpened(approval, ctx),
      replaying: (runId) => runs.wasRestored(runId),
      persistRun: (runId, settled) => runs.persistCurrent(runId, settled),
      report: feed,
      prepareStep: createStepPreparer({ loaded, sessions, contextOf: (runId) => runs.contextOf(runId) }),
      ...(cluster === null ? {} : { claims: cluster.claims }),
      beforeRun: (call) => {
        // A read-only call takes no checkpoint and asks for no scope (the hot path).
        if (mayChangeRoots(call.tool, call.decision))
          checkpoints.beforeCall(call, call.decision, runAuthority.scopeOf(call.runId).roots);
      },
    }),
    {
      onStarted: (input) => router.started(input),
      onRestored: (input) => logRunResumed(logger, input),
      onStatus: (runId, status, ctx) => {
        cluster?.runStatus(runId, status);
        router.status(runId, status, ctx);
      },
      onEnded: (runId, outcome, ctx) => router.ended(runId, outcome, ctx),
    },
  );
  // From here runs can be live: stopping parks them, snapshots persisted.
  lifecycle.onStop('runs', () => runs.stopAll());
  const read = new ReadModels({
    ...details,
    store,
    loaded,
    mode: (agentId) => authority.mode(agentId),
    roots: () => authority.roots(),
    contextOf: (runId) => runs.contextOf(runId),
    sandbox: policyEnv.sandbox,
    ...(cluster === null ? {} : { clusterInbox: () => cluster.pendingApprovals() }),
  });
  writeRuntimeFiles(loaded, clock, cluster);
  runtimeFileWritten = true;
  // The rewind lock: a live run's roots, from its envelope (runs/rewinds.ts).
  const rewinds = new Rewinds({
    stateDir,
    now,
    store,
    liveRuns: () =>
      runs.liveRuns().flatMap((runId) => {
        const status = runs.liveStatus(runId);
        return status === null ? [] : [{ runId, status, roots: runAuthority.scopeOf(runId).roots }];
      }),
    clusterNode: cluster === null ? null : (loaded.config.node?.id ?? '(unnamed node)'),
  });
  return {
    loaded,
    clock,
    logger,
    store,
    nats,
    bus,
    queue,
    tools,
    registry,
    policyEnv,
    cluster,
    inspector,
    authority,
    feed,
    runs,
    rewinds,
    waiters,
    approvals,
    agents,
    delegation,
    goals,
    goalListeners,
    platforms,
    router,
    sessions,
    sessionsView: sessionsView(sessions, compactor),
    read,
    lifecycle,
    traceOf: (runId) => traceOf(runId),
  };
}

/** The runtime file (`snotra start` is up: pid, start time) and the cluster file of a cluster node. */
function writeRuntimeFiles(loaded: LoadedConfig, clock: Clock, cluster: ClusterNode | null): void {
  const stateDir = loaded.config.stateDir;
  writeFileSync(join(stateDir, RUNTIME_FILE), JSON.stringify({ pid: process.pid, startedAt: clock.now() }), {
    mode: 0o600,
  });
  if (cluster === null) {
    rmSync(join(stateDir, CLUSTER_FILE), { force: true });
    removeClusterInbox(stateDir);
  } else
    writeFileSync(join(stateDir, CLUSTER_FILE), JSON.stringify({ nodeId: loaded.config.node?.id ?? null }), {
      mode: 0o600,
    });
}
