import type { Logger } from 'pino';
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { agentMachine, type AgentMessage } from '../../machines/agent/machine.ts';
import { makeRunId } from '../../machines/run/run-id.ts';
import type { Mode } from '../../policy/risk.ts';
import type { Store } from '../../store/index.ts';
import type { AgentQueue, Verdict } from '../agent-queue.ts';
import { agentGrant, type ActorBusFactory } from '../bus/auth/index.ts';
import type { Bus, TraceContextValues } from '../bus/index.ts';
import type { RuntimeKinds } from '../messages.ts';
import type { RunHost } from '../runs/run-host.ts';

/** What the agent pool works with. */
/** Starts a run for a message an agent actor accepted. */
export type StartRun = (agentId: string, message: AgentMessage, runId: string) => void;

export interface AgentPoolDeps {
  readonly queue: AgentQueue;
  readonly runs: RunHost;
  readonly store: Store;
  readonly logger: Logger;
  /** Per-actor bus auth (`bus.auth: "per-actor"`): mints each agent actor's own connection; null in token mode. */
  readonly actorBusFactory: ActorBusFactory<RuntimeKinds> | null;
  /** Cluster mode: another node may take a message, so a send always goes by the bus. */
  readonly clustered: boolean;
  /** An agent's mode now (the grant of its bus connection follows it). */
  readonly mode: (agentId: string) => Mode;
  readonly inspect: (event: InspectionEvent) => void;
  /** Whether the runtime is stopping (a consumer that fails then is not an error). */
  readonly stopping: () => boolean;
  /** A message came with a trace context (its `traceparent` header): the run it starts joins it (telemetry on). */
  readonly traceArrived?: ((runId: string, trace: TraceContextValues) => void) | null;
}

/** The agent actors' slot cap. */
const MAX_CONCURRENT_RUNS = 16;

/**
 * The agent actors and how a message reaches one: one actor per configured agent (its run slots),
 * its JetStream consumer, and under per-actor bus auth its own bus connection with the grant of
 * its mode. `send` is the one way a surface's message becomes a run.
 */
export class AgentPool {
  readonly #agents = new Map<string, Actor<typeof agentMachine>>();
  /** Each agent's consumer handler of its messages (see `send`). */
  readonly #localHandlers = new Map<
    string,
    (message: Omit<AgentMessage, 'type'>, trace: TraceContextValues | null) => Promise<Verdict>
  >();
  /** Per-actor bus auth: each agent actor's own connection, by agent id. */
  readonly #actorBuses = new Map<string, Promise<Bus<RuntimeKinds>>>();

  constructor(private readonly deps: AgentPoolDeps) {
    const factory = deps.actorBusFactory;
    if (factory !== null)
      deps.queue.pullOn((agentId) => this.#agentBus(factory, agentId).then((b) => b.nats));
  }

  /**
   * Starts an agent's actor and its consumer of messages; `startRun` starts a run for each
   * message the actor accepts (given here: the router is built after the pool it reports to).
   */
  start(agentId: string, startRun: StartRun): void {
    const { deps } = this;
    const actor = createActor(
      agentMachine.provide({
        actions: {
          // Deferred: creating an actor inside another actor's action is not allowed in XState.
          startRun: (_, { message, runId }) => queueMicrotask(() => startRun(agentId, message, runId)),
          refuse: (_, { message, reason }) =>
            deps.logger.warn({ agentId, messageId: message.messageId, reason }, 'message refused'),
        },
      }),
      { input: { agentId, maxConcurrentRuns: MAX_CONCURRENT_RUNS }, inspect: deps.inspect },
    ).start();
    this.#agents.set(agentId, actor);
    const handle = async (
      message: Omit<AgentMessage, 'type'>,
      trace: TraceContextValues | null = null,
    ): Promise<Verdict> => {
      const runId = makeRunId(agentId, message.messageId);
      if (deps.runs.isLive(runId) || deps.store.snapshots.has(runId)) return 'ack';
      // Stopping: no new run; the message stays durable for the next start.
      if (deps.stopping()) return 'nak';
      if (trace !== null) deps.traceArrived?.(runId, trace);
      const refusedBefore = actor.getSnapshot().context.refused;
      actor.send({ type: 'MESSAGE', ...message });
      if (actor.getSnapshot().context.refused > refusedBefore) return 'nak';
      // The run starts in a microtask; acknowledge only once its first snapshot is stored.
      await new Promise((r) => setImmediate(r));
      if (deps.runs.isLive(runId)) return (await deps.runs.stored(runId)) ? 'ack' : 'nak';
      return deps.store.snapshots.has(runId) ? 'ack' : 'nak';
    };
    this.#localHandlers.set(agentId, handle);
    const consuming = deps.queue.consume(agentId, handle);
    consuming.catch((err: unknown) => {
      if (!deps.stopping())
        deps.logger.error({ agentId, err: (err as Error).message }, 'agent message consumer failed');
    });
  }

  /**
   * Publishes a message to an agent over the bus; resolves once it is durable. On one node
   * (no cluster, bus token mode) the agent's consumer is this process, so it is also handed the
   * message at once (see `AgentQueue.publishAndStart`): the run starts without waiting for the
   * round trip through nats-server, and the delivery that follows finds the run and acknowledges
   * it. When the agent is at its run cap, or another node may take the message, it goes by the
   * bus alone and resolves once JetStream has stored it. `trace`: the context of the traced run
   * the runtime sends it from (a goal's previous iteration), which the run it starts joins.
   */
  async send(
    agentId: string,
    message: Omit<AgentMessage, 'type'>,
    trace: TraceContextValues | null = null,
  ): Promise<void> {
    const { deps } = this;
    const agent = this.#agents.get(agentId);
    if (agent === undefined) throw new Error(`unknown agent ${JSON.stringify(agentId)}`);
    const local = this.#localHandlers.get(agentId);
    const { liveRuns, maxConcurrentRuns } = agent.getSnapshot().context;
    if (
      local === undefined ||
      deps.clustered ||
      deps.actorBusFactory !== null ||
      liveRuns.length >= maxConcurrentRuns
    ) {
      await deps.queue.publish(agentId, message, trace);
      return;
    }
    await deps.queue.publishAndStart(agentId, message, local, trace);
    // Started here: resolved once its first state is stored too (a caller may read it at once).
    const runId = makeRunId(agentId, message.messageId);
    if (deps.runs.isLive(runId)) await deps.runs.stored(runId);
  }

  /** A run of the agent ended or parked: it holds none of the agent's slots any more. */
  runEnded(agentId: string, runId: string): void {
    this.#agents.get(agentId)?.send({ type: 'RUN_ENDED', runId });
  }

  /** An agent actor's own bus connection under per-actor auth; null in token mode or before it connected. */
  async actorBus(agentId: string): Promise<Bus<RuntimeKinds> | null> {
    return (await this.#actorBuses.get(agentId)) ?? null;
  }

  /** Per-actor bus auth: the agent actor's connection gets the grant of its new mode. */
  regrant(agentId: string, mode: Mode): void {
    const factory = this.deps.actorBusFactory;
    const bus = this.#actorBuses.get(agentId);
    if (factory === null || bus === undefined) return;
    bus
      .then((b) => factory.regrant(b, agentGrant(agentId, { mode })))
      .catch((err: unknown) => {
        if (!this.deps.stopping())
          this.deps.logger.error({ agentId, err: (err as Error).message }, 'agent bus re-grant failed');
      });
  }

  /** Stops the agent actors (their consumers end with the queue). */
  stopActors(): void {
    for (const a of this.#agents.values()) a.stop();
  }

  /** Closes the agent actors' own bus connections (per-actor auth). */
  async closeBuses(): Promise<void> {
    for (const b of this.#actorBuses.values()) await b.then((x) => x.close()).catch(() => {});
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
        agentGrant(agentId, { mode: this.deps.mode(agentId) }),
      );
      this.#actorBuses.set(agentId, bus);
    }
    return bus;
  }
}
