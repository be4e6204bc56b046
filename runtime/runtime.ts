import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AgentMessage } from '../machines/agent/machine.ts';
import { makeRunId } from '../machines/run/run-id.ts';
import type { RunOutcome } from '../machines/run/types.ts';
import type { Interaction, Mode } from '../policy/risk.ts';
import type { WorkspaceRoot } from '../policy/roots.ts';
import type {
  ApprovalDecision,
  DecideResult,
  GoalAction,
  GoalControl,
  GoalRecord,
  IterationRecord,
} from '../store/index.ts';
import { approveWithGrant, GrantNotEligibleError, type GrantScope } from './approvals/approve-with-grant.ts';
import { assemble, type RuntimeParts } from './boot/assemble.ts';
import type { RuntimeOptions, SubmitOptions } from './boot/options.ts';
import { startServices } from './boot/services.ts';
import { Lifecycle, shutdown } from './boot/shutdown.ts';
import { preflightStateDir, StateDirFootprint } from './boot-guard.ts';
import { refuseLocalDecisionInCluster } from './approvals/cluster-refusal.ts';
import type { ClusterNode } from './cluster/index.ts';
import { chatMessage, submitMessage, taskMessage } from './agents/messages.ts';
import { registerInternals } from './internals.ts';
import type { RunFeedListener } from './events.ts';
import type { ActorEvent, ActorTreeSnapshot } from './inspect/index.ts';
import type { PlatformHost } from './platforms/host.ts';
import type { GoalView, ReadModels } from './read/read-models.ts';
import type { ApprovalListener } from './runs/run-router.ts';
import { RUNTIME_FILE } from './runtime-file.ts';
import { sendInSession } from './sessions/send.ts';
import type { SessionsView } from './sessions/view.ts';
import { acquireStateLock, type StateLock } from './state-lock.ts';

export { RUNTIME_FILE };
export {
  DEFAULT_BUDGET,
  LOG_LEVELS,
  type LogLevel,
  type RuntimeOptions,
  type SubmitOptions,
} from './boot/options.ts';
export type { ApprovalListener } from './runs/run-router.ts';
export { GrantNotEligibleError, type GrantScope };
export type { GoalAction, GoalControl, GoalRecord, IterationRecord };
export type { GoalView } from './read/read-models.ts';

/**
 * The Snotra runtime: store, bus, policy, agents, runs and approvals wired together. Start it
 * with `Runtime.start`; stop it with `stop()`. At start it restores every run that was not
 * finished, re-arms approval deadlines and resumes runs whose decision arrived while it was down.
 * A front: each member hands its job to the module named for it (boot/, agents/, runs/,
 * authority/, read/, approvals/).
 */
export class Runtime {
  readonly #parts: RuntimeParts;
  readonly #lock: StateLock;
  #stopped: Promise<void> | null = null;

  private constructor(parts: RuntimeParts, lock: StateLock) {
    this.#parts = parts;
    this.#lock = lock;
  }

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
    // One teardown stack: each part pushes its teardown as it is built; a failed boot and `stop`
    // both run it (see boot/shutdown.ts).
    const lifecycle = new Lifecycle();
    try {
      const parts = await assemble(options, lifecycle);
      const rt = new Runtime(parts, lock);
      registerInternals(rt, parts);
      await startServices(parts, options.syncIntervalMs ?? 1000, (agentId, taskId, text, messageId) =>
        rt.runTask(agentId, taskId, text, { messageId }),
      );
      return rt;
    } catch (err) {
      // Keep tearing down whatever fails: the boot error is the one to report.
      await shutdown(lifecycle).catch(() => {});
      footprint.undo();
      lock.release(true);
      throw err;
    }
  }

  /** Sends a chat message (attended) to an agent and resolves with the run's outcome. */
  async chat(
    agentId: string,
    text: string,
    opts: { sessionId?: string; interaction?: Interaction } = {},
  ): Promise<{ runId: string; outcome: RunOutcome }> {
    const messageId = randomUUID();
    const runId = makeRunId(agentId, messageId);
    const done = this.#parts.waiters.waitForRun(runId);
    await sendInSession(
      this.#parts.sessions,
      (a, m) => this.send(a, m),
      agentId,
      chatMessage(messageId, text, opts),
    );
    return { runId, outcome: await done };
  }

  /**
   * Starts a run from a surface and returns its id once the message is on the bus (the run's
   * events reach `onRunEvent` listeners; `waitForRun` resolves with its outcome). A run of a
   * conversation (the default) continues its session; `SessionBusyError` while another run
   * holds that session.
   */
  async submit(agentId: string, text: string, opts: SubmitOptions = {}): Promise<string> {
    const messageId = randomUUID();
    const message = submitMessage(messageId, text, opts);
    await sendInSession(this.#parts.sessions, (a, m) => this.send(a, m), agentId, message);
    return makeRunId(agentId, messageId);
  }

  /**
   * Starts an unattended run for a task (scheduled or triggered). Resolves with the run id once
   * the message is durable (see `send`); the run parks in the Inbox whenever it needs a human.
   * A caller that must not start a task twice (a retry after a crash) passes its own
   * `messageId` — the same `messageId` starts at most one run, however often it is sent.
   */
  async runTask(
    agentId: string,
    taskId: string,
    text: string,
    opts: { messageId?: string } = {},
  ): Promise<string> {
    const messageId = opts.messageId ?? randomUUID();
    await this.send(agentId, taskMessage(messageId, taskId, text));
    return makeRunId(agentId, messageId);
  }

  /** Publishes a message to an agent over the bus; resolves once it is durable (AgentPool.send). */
  send(agentId: string, message: Omit<AgentMessage, 'type'>): Promise<void> {
    return this.#parts.agents.send(agentId, message);
  }

  /** Resolves when the run ends (or at once with its stored outcome when it already ended). */
  waitForRun(runId: string): Promise<RunOutcome> {
    return this.#parts.waiters.waitForRun(runId);
  }

  /**
   * Interrupts a live run (a human's Ctrl-C): saved as it is, its in-flight model request or
   * tool process ended, its actor stopped. It goes on with `resume` or at the next start; its
   * session stays held by it until it ends. False when the run is not live here.
   */
  interrupt(runId: string): boolean {
    return this.#parts.runs.interrupt(runId);
  }

  /** Brings back an interrupted (or otherwise unfinished) run; false when there is none to bring back. */
  resume(runId: string): boolean {
    return this.#parts.runs.restore(runId);
  }

  /**
   * Ends an unfinished run at a human's request (live, interrupted or parked): it ends `failed`
   * with reason `cancelled: <reason>` and its session is released. False when there is none.
   */
  cancel(runId: string, reason: string): boolean {
    return this.#parts.runs.cancel(runId, reason);
  }

  /** Listens for approvals that need a human (attended: inline; unattended: already in the Inbox). */
  onApproval(listener: ApprovalListener): () => void {
    return this.#parts.router.onApproval(listener);
  }

  /**
   * A human decision from an authenticated in-process surface. Single use; says why when it
   * changes nothing. A denial's `reason` reaches the model in its `tool.denied` observation.
   */
  decide(approvalId: string, decision: ApprovalDecision, user: string, reason?: string): DecideResult {
    refuseLocalDecisionInCluster(this.#parts.cluster, 'decide');
    return this.#parts.approvals.decide(approvalId, decision, user, reason);
  }

  /**
   * `decide` that resolves once the decision is on stable storage; decisions made at the same
   * time share one fsync (group commit). The surfaces (sidecar) decide through it. Cluster mode:
   * single use across nodes (a CAS in the shared Inbox), whichever node was asked.
   */
  decideAsync(
    approvalId: string,
    decision: ApprovalDecision,
    user: string,
    reason?: string,
  ): Promise<DecideResult> {
    const { cluster, approvals } = this.#parts;
    if (cluster !== null) return cluster.decide(approvalId, decision, user, reason);
    return approvals.decideAsync(approvalId, decision, user, reason);
  }

  /**
   * Approves a pending request and, in the same transaction, grants a session approval or a
   * standing approval for the exact target (approve-with-grant.ts); an ineligible scope throws
   * GrantNotEligibleError and decides nothing.
   */
  approveWithGrant(approvalId: string, scope: GrantScope, user: string): DecideResult {
    refuseLocalDecisionInCluster(this.#parts.cluster, 'approveWithGrant');
    const { store, registry, approvals, runs, clock } = this.#parts;
    const deps = {
      store,
      registry,
      approvals,
      contextOf: (id: string) => runs.contextOf(id),
      clock: () => clock.now(),
    };
    return approveWithGrant(deps, approvalId, scope, user);
  }

  /** Replaces the workspace roots while running (a human's change); live runs and their sub-agents shrink at once. Audited. */
  setRoots(roots: readonly WorkspaceRoot[], by: string): void {
    this.#parts.authority.setRoots(roots, by);
  }

  /** Changes an agent's mode while running; its live sub-agents and its bus grant follow at once. Audited. */
  setAgentMode(agentId: string, mode: Mode, by: string): void {
    this.#parts.authority.setMode(agentId, mode, by);
    this.#parts.agents.regrant(agentId, mode);
  }

  /** What surfaces read: typed, redacted views of agents, approvals, runs, audit and goals. */
  get read(): ReadModels {
    return this.#parts.read;
  }

  /** Durable conversations: list, read, create and remove sessions (runtime/sessions). */
  get sessions(): SessionsView {
    return this.#parts.sessionsView;
  }

  /** Listens to the live run feed (runtime/events.ts): redacted events of every run. Returns the removal. */
  onRunEvent(listener: RunFeedListener): () => void {
    return this.#parts.feed.on(listener);
  }

  /** The live actor tree (agents → runs → sub-agent runs → approvals): ids, states and budgets only. */
  actors(): ActorTreeSnapshot {
    return this.#parts.inspector.snapshot();
  }

  /** Listens to the changes of the live actor tree (`actor.*` events); returns the removal. */
  onActorEvent(listener: (e: ActorEvent) => void): () => void {
    return this.#parts.inspector.on(listener);
  }

  /**
   * A human's request for a goal (`start`, `pause`, `resume`, `cancel`) from an authenticated
   * in-process surface: recorded durably, applied at once; returns the applied request.
   */
  controlGoal(goalId: string, action: GoalAction, by: string): GoalControl {
    const { store, goals } = this.#parts;
    const seq = store.goals.requestControl(goalId, action, by);
    goals.applyControls();
    return store.goals.control(seq) as GoalControl;
  }

  /** Listens to changes of every goal's stored state (status, iteration, usage). Returns the removal. */
  onGoalChange(listener: (goal: GoalRecord) => void): () => void {
    const { goalListeners } = this.#parts;
    goalListeners.add(listener);
    return () => goalListeners.delete(listener);
  }

  /** Every configured goal with its stored state (null when never started), and its iterations. */
  goals(): GoalView[] {
    return this.#parts.read.goals();
  }

  /** Platform replies (surfaces.platforms): journals, pairing and runs for the platform gateways. */
  get platforms(): PlatformHost {
    return this.#parts.platforms;
  }

  /** Stops agents, parks live runs (snapshots persisted), closes the bus, the server and the store; releases the state dir. */
  stop(): Promise<void> {
    this.#stopped ??= shutdown(this.#parts.lifecycle).finally(() => this.#lock.release());
    return this.#stopped;
  }

  /** This runtime as a node of a cluster (`node.id` in config), or null on a single node (README "Cluster"). */
  get cluster(): ClusterNode | null {
    return this.#parts.cluster;
  }

  /** The runtime's logger (redacted): surfaces log through it. */
  get logger(): Logger {
    return this.#parts.logger;
  }
}
