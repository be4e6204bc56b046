import type {
  AgentView,
  ApprovalRecord,
  CheckpointSummary,
  CompactResult,
  RewindOutcome,
  RunOutcome,
  SessionView,
} from '../../runtime/index.ts';
import type { RequestBody } from '../join/protocol.ts';
import type { AuthorityNow, ChatRuntime, FeedListener } from './chat.ts';
import { joinRunning } from './joined.ts';
import type { DecideResult } from './types.ts';

/**
 * The chat's view of the runtime running on `stateDir` (`snotra start`), over its join socket;
 * null when none runs there. Its runs, sessions, Inbox and modes are that runtime's: an approval
 * the chat is asked shows in the start's Inbox too, and closing the chat leaves the runtime
 * running. Refused (`joined_from_agent_process`) from a process the runtime started.
 */
export async function joinedChat(stateDir: string): Promise<ChatRuntime | null> {
  const listeners = new Set<FeedListener>();
  const joined = await joinRunning(stateDir, (event) => {
    for (const l of listeners) l(event);
  });
  if (joined === null) return null;
  const { conn, hello } = joined;
  const ask = (body: RequestBody) => conn.request(body);
  const control = async (runId: string, action: 'interrupt' | 'resume' | 'cancel', reason?: string) =>
    (await ask({ type: 'run-control', runId, action, ...(reason === undefined ? {} : { reason }) })).done ===
    true;
  return {
    kind: 'joined',
    pid: hello.pid,
    agents: hello.agents,
    gone: conn.gone,
    onRunEvent(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async submit(agent, text, session) {
      const reply = await ask({ type: 'chat-submit', agent, text, ...(session === null ? {} : { session }) });
      return { runId: String(reply.runId), session: String(reply.session) };
    },
    interrupt: (runId) => control(runId, 'interrupt'),
    resume: (runId) => control(runId, 'resume'),
    cancel: (runId, reason) => control(runId, 'cancel', reason),
    waitForRun: async (runId) => (await ask({ type: 'wait', runId })).outcome as RunOutcome,
    decideAsync: async (approvalId, decision, _user, reason) =>
      (await ask({ type: 'decide', approvalId, decision, ...(reason === undefined ? {} : { reason }) }))
        .result as DecideResult,
    approveWithGrant: async (approvalId, scope) =>
      (await ask({ type: 'grant', approvalId, scope })).result as DecideResult,
    agentModes: async () => (await ask({ type: 'agents' })).agents as AgentView[],
    setMode: async (agent, mode) => void (await ask({ type: 'set-mode', agent, mode })),
    authorityNow: async (agent) => (await ask({ type: 'roots', agent })) as unknown as AuthorityNow,
    pendingApprovals: async () => (await ask({ type: 'inbox' })).approvals as ApprovalRecord[],
    listSessions: async () => (await ask({ type: 'sessions', op: 'list' })).sessions as SessionView[],
    latestSession: async () => (await ask({ type: 'sessions', op: 'latest' })).session as SessionView | null,
    getSession: async (session) =>
      (await ask({ type: 'session', op: 'get', session })).session as SessionView | null,
    createSession: async (agent, name) =>
      (await ask({ type: 'session', op: 'create', agent, ...(name === undefined ? {} : { session: name }) }))
        .session as SessionView,
    compact: async (session) =>
      (await ask({ type: 'session', op: 'compact', session })).result as CompactResult,
    checkpoints: async (session) =>
      (await ask({ type: 'checkpoints', session })).checkpoints as CheckpointSummary[],
    rewind: async (checkpoint, dryRun) =>
      (await ask({ type: 'rewind', checkpoint, dryRun, surface: 'chat' })).outcome as RewindOutcome,
    async close() {
      listeners.clear();
      conn.close();
    },
  };
}
