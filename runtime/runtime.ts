import { randomUUID } from 'node:crypto';
import { makeRunId } from '../machines/run/run-id.ts';
import type { RunOutcome } from '../machines/run/types.ts';
import type { Interaction } from '../policy/risk.ts';
import type {
  ApprovalDecision,
  DecideResult,
  GoalAction,
  GoalControl,
  GoalRecord,
  IterationRecord,
} from '../store/index.ts';
import { ApprovalsFacade } from './approvals/approvals-facade.ts';
import { GrantNotEligibleError, type GrantScope } from './approvals/approve-with-grant.ts';
import { AuthorityFacade } from './authority/authority-facade.ts';
import { assemble, type RuntimeParts } from './boot/assemble.ts';
import type { RuntimeOptions } from './boot/options.ts';
import { startServices } from './boot/services.ts';
import { Lifecycle, shutdown } from './boot/shutdown.ts';
import { preflightStateDir, StateDirFootprint } from './boot-guard.ts';
import { refuseLocalDecisionInCluster } from './approvals/cluster-refusal.ts';
import { chatMessage } from './agents/messages.ts';
import { GoalsFacade } from './goals/goals-facade.ts';
import { registerInternals } from './internals.ts';
import type { InspectFacade } from './inspect/inspect-facade.ts';
import { NodeFacade } from './node/node-facade.ts';
import type { ReadModels } from './read/read-models.ts';
import type { ApprovalListener } from './runs/run-router.ts';
import { RunsFacade } from './runs/runs-facade.ts';
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
export type { ApprovalsFacade, AuthorityFacade, GoalsFacade, InspectFacade, NodeFacade, RunsFacade };

/**
 * The Snotra runtime: store, bus, policy, agents, runs and approvals wired together. Start it
 * with `Runtime.start`; stop it with `stop()`. At start it restores every run that was not
 * finished, re-arms approval deadlines and resumes runs whose decision arrived while it was down.
 * A front: the README's embedding calls (`chat`, `decide`, `onApproval`, `waitForRun`, `stop`)
 * are its own one-line delegations; the rest is grouped behind small facades, each owned by its
 * room: `runs`, `approvals`, `authority`, `goals`, the read models `read` and `sessions`, and
 * `node` (this process: its logger, cluster membership, live actor tree and platform host).
 */
export class Runtime {
  readonly #parts: RuntimeParts;
  readonly #lock: StateLock;
  #stopped: Promise<void> | null = null;
  /** Starting runs (`submit`, `runTask`, `send`) and the live run feed (`onRunEvent`). */
  readonly runs: RunsFacade;
  /** How the surfaces decide: `decideAsync` (group commit; cluster-wide) and `approveWithGrant`. */
  readonly approvals: ApprovalsFacade;
  /** A human's changes while running: `setRoots`, `setAgentMode`. */
  readonly authority: AuthorityFacade;
  /** The configured goals: `list()`, `control`, `onChange`. */
  readonly goals: GoalsFacade;
  /** This process as a node: `logger`, `cluster`, the live actor tree (`inspect`) and `platforms`. */
  readonly node: NodeFacade;

  private constructor(parts: RuntimeParts, lock: StateLock) {
    this.#parts = parts;
    this.#lock = lock;
    this.runs = new RunsFacade(parts);
    this.approvals = new ApprovalsFacade(parts);
    this.authority = new AuthorityFacade(parts);
    this.goals = new GoalsFacade(parts);
    this.node = new NodeFacade(parts);
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
        rt.runs.runTask(agentId, taskId, text, { messageId }),
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
      (a, m) => this.runs.send(a, m),
      agentId,
      chatMessage(messageId, text, opts),
    );
    return { runId, outcome: await done };
  }

  /** Resolves when the run ends (or at once with its stored outcome when it already ended). */
  waitForRun(runId: string): Promise<RunOutcome> {
    return this.#parts.waiters.waitForRun(runId);
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

  /** What surfaces read: typed, redacted views of agents, approvals, runs, audit and goals. */
  get read(): ReadModels {
    return this.#parts.read;
  }

  /** Durable conversations: list, read, create and remove sessions (runtime/sessions). */
  get sessions(): SessionsView {
    return this.#parts.sessionsView;
  }

  /** Stops agents, parks live runs (snapshots persisted), closes the bus, the server and the store; releases the state dir. */
  stop(): Promise<void> {
    this.#stopped ??= shutdown(this.#parts.lifecycle).finally(() => this.#lock.release());
    return this.#stopped;
  }
}
