import type {
  AgentView,
  ApprovalRecord,
  CheckpointSummary,
  CompactResult,
  RewindOutcome,
  RootView,
  RunFeedEvent,
  Runtime,
  SessionView,
} from '../../runtime/index.ts';
import type { RuntimeClient } from './types.ts';

/** A run feed listener; the returned function removes it. */
export type FeedListener = (event: RunFeedEvent) => void;

/** The modes `/mode` may set. */
export type ChatMode = 'allow' | 'ask' | 'deny';

/** The roots of the runtime now and an agent's mode now (what `/roots` shows). */
export interface AuthorityNow {
  readonly roots: readonly RootView[];
  readonly mode: AgentView['mode'];
}

/**
 * What `snotra chat` does with a runtime, whether it runs in this process (`embedded`, started
 * for the chat and stopped when it ends) or in a running `snotra start` joined over its join
 * socket (`joined`, left running when the chat ends). Every call may reject: a joined runtime
 * can stop under the chat (`runtime_gone`).
 */
/** Waiting for a run and deciding approvals are the same calls as every client's (`RuntimeClient`). */
export interface ChatRuntime extends Pick<RuntimeClient, 'waitForRun' | 'decideAsync' | 'approveWithGrant'> {
  readonly kind: 'embedded' | 'joined';
  /** The pid of the process the runtime runs in. */
  readonly pid: number;
  /** The agents of the runtime's config. */
  readonly agents: readonly string[];
  /**
   * Aborted, with the `ClientError` that says so as its reason, as soon as the runtime stops
   * under the chat (joined: its join connection ends); never for an embedded one.
   */
  readonly gone: AbortSignal;
  /** Every run feed event of the runtime (redacted when joined) from now until `off`. */
  onRunEvent(listener: FeedListener): () => void;
  /** Sends a chat message (attended) in `session`, or in a new session when null. */
  submit(agent: string, text: string, session: string | null): Promise<{ runId: string; session: string }>;
  /** Interrupts a run (saved, resumable); false when it is not live. */
  interrupt(runId: string): Promise<boolean>;
  /** Brings an interrupted run back; false when there is none to bring back. */
  resume(runId: string): Promise<boolean>;
  /** Ends an unfinished run; false when there is none. */
  cancel(runId: string, reason: string): Promise<boolean>;
  agentModes(): Promise<AgentView[]>;
  setMode(agent: string, mode: ChatMode, user: string): Promise<void>;
  /** The runtime's roots and `agent`'s mode as they are now (joined: the running runtime's, not this config's). */
  authorityNow(agent: string): Promise<AuthorityNow>;
  pendingApprovals(): Promise<ApprovalRecord[]>;
  listSessions(): Promise<SessionView[]>;
  latestSession(): Promise<SessionView | null>;
  getSession(session: string): Promise<SessionView | null>;
  createSession(agent: string, name?: string): Promise<SessionView>;
  compact(session: string): Promise<CompactResult>;
  checkpoints(session: string): Promise<CheckpointSummary[]>;
  rewind(checkpoint: string, dryRun: boolean, user: string): Promise<RewindOutcome>;
  /** Embedded: stops the runtime (its runs saved). Joined: leaves it running. */
  close(): Promise<void>;
}

/** The chat's view of a runtime started in this process for the chat. */
export function embeddedChat(rt: Runtime, agents: readonly string[]): ChatRuntime {
  return {
    kind: 'embedded',
    pid: process.pid,
    agents,
    gone: new AbortController().signal,
    onRunEvent: (listener) => rt.runs.onRunEvent(listener),
    async submit(agent, text, session) {
      const id = session ?? rt.sessions.create(agent, 'chat').sessionId;
      const runId = await rt.runs.submit(agent, text, { sessionId: id, taskId: id, surface: 'chat' });
      return { runId, session: id };
    },
    interrupt: async (runId) => rt.runs.interrupt(runId),
    resume: async (runId) => rt.runs.resume(runId),
    cancel: async (runId, reason) => rt.runs.cancel(runId, reason),
    waitForRun: (runId) => rt.waitForRun(runId),
    decideAsync: (id, decision, user, reason) => rt.approvals.decideAsync(id, decision, user, reason),
    approveWithGrant: async (id, scope, user) => rt.approvals.approveWithGrant(id, scope, user),
    agentModes: async () => rt.read.agents(),
    setMode: async (agent, mode, user) => rt.authority.setAgentMode(agent, mode, user),
    authorityNow: async (agent) => ({
      roots: rt.read.roots(),
      mode: rt.read.agents().find((a) => a.id === agent)?.mode ?? 'deny',
    }),
    pendingApprovals: async () => rt.read.pendingApprovals(),
    listSessions: async () => rt.sessions.list(),
    latestSession: async () => rt.sessions.latest(),
    getSession: async (session) => rt.sessions.get(session),
    createSession: async (agent, name) => rt.sessions.create(agent, 'chat', name),
    compact: (session) => rt.sessions.compact(session, { surface: 'chat' }),
    checkpoints: async (session) => rt.runs.checkpoints({ sessionId: session }),
    rewind: async (checkpoint, dryRun, user) => rt.runs.rewind(checkpoint, { dryRun, user, surface: 'chat' }),
    close: () => rt.stop(),
  };
}
