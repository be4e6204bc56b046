import { randomUUID } from 'node:crypto';
import type { AgentMessage } from '../../machines/agent/machine.ts';
import { makeRunId } from '../../machines/run/run-id.ts';
import type { AgentPool } from '../agents/agent-pool.ts';
import { submitMessage, taskMessage } from '../agents/messages.ts';
import type { SubmitOptions } from '../boot/options.ts';
import type { RunFeedListener } from '../events.ts';
import type { RunFeed } from '../run-feed.ts';
import { sendInSession } from '../sessions/send.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { CheckpointFilter, CheckpointSummary } from '../checkpoints/index.ts';
import type { RewindOutcome } from '../control/rewind.ts';
import type { RunHost } from './run-host.ts';
import type { RewindRequest, Rewinds } from './rewinds.ts';

/** What {@link RunsFacade} hands its calls to. */
export interface RunsFacadeDeps {
  readonly agents: AgentPool;
  readonly sessions: Sessions;
  readonly feed: RunFeed;
  readonly runs: Pick<RunHost, 'interrupt' | 'restore' | 'cancel'>;
  readonly rewinds: Rewinds;
}

/**
 * `runtime.runs`: starting runs from a surface or a scheduler, and the live run feed. Every run
 * starts as a message on the bus; the ids come from `machines/run/run-id.ts`.
 */
export class RunsFacade {
  readonly #deps: RunsFacadeDeps;

  constructor(deps: RunsFacadeDeps) {
    this.#deps = deps;
  }

  /**
   * Starts a run from a surface and returns its id once the message is on the bus (the run's
   * events reach `onRunEvent` listeners; `runtime.waitForRun` resolves with its outcome). A run
   * of a conversation (the default) continues its session; `SessionBusyError` while another run
   * holds that session.
   */
  async submit(agentId: string, text: string, opts: SubmitOptions = {}): Promise<string> {
    const messageId = randomUUID();
    const message = submitMessage(messageId, text, opts);
    await sendInSession(this.#deps.sessions, (a, m) => this.send(a, m), agentId, message);
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
    return this.#deps.agents.send(agentId, message);
  }

  /** Listens to the live run feed (runtime/events.ts): redacted events of every run. Returns the removal. */
  onRunEvent(listener: RunFeedListener): () => void {
    return this.#deps.feed.on(listener);
  }

  /**
   * Interrupts a live run (a human's Ctrl-C): saved as it is, its in-flight model request or
   * tool process ended, its actor stopped. It goes on with `resume` or at the next start; its
   * session stays held by it until it ends. False when the run is not live here.
   */
  interrupt(runId: string): boolean {
    return this.#deps.runs.interrupt(runId);
  }

  /** Brings back an interrupted (or otherwise unfinished) run; false when there is none to bring back. */
  resume(runId: string): boolean {
    return this.#deps.runs.restore(runId);
  }

  /**
   * Ends an unfinished run at a human's request (live, interrupted or parked): it ends `failed`
   * with reason `cancelled: <reason>` and its session is released. False when there is none.
   */
  cancel(runId: string, reason: string): boolean {
    return this.#deps.runs.cancel(runId, reason);
  }

  /** The checkpoints taken before calls that could change a root (a run's, a session's, all), oldest first. */
  checkpoints(filter: CheckpointFilter = {}): CheckpointSummary[] {
    return this.#deps.rewinds.list(filter);
  }

  /**
   * A human's rewind of the roots to checkpoint `id` (`dryRun`: the diff only), audited `rewind`
   * with the surface and user, undoable through the checkpoint it takes first. Refused
   * (`RewindBlockedError`, naming the run) while a live run can write a root it covers.
   */
  rewind(id: string, request: RewindRequest): RewindOutcome {
    return this.#deps.rewinds.rewind(id, request);
  }

  /**
   * Throws `RewindInClusterError` when this runtime is a cluster node, where every rewind (not a
   * dry run) is refused: a surface checks it before it looks the run up, so the refusal is the
   * same whatever this node's own store holds.
   */
  refuseRewindInCluster(): void {
    this.#deps.rewinds.refuseInCluster();
  }
}
