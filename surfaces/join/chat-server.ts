import type { Runtime } from '../../runtime/index.ts';
import type { JoinRequest } from './protocol.ts';

/** The join requests `snotra chat` adds to those of `snotra run`. */
export type ChatRequest = Extract<
  JoinRequest,
  {
    type:
      | 'chat-submit'
      | 'run-control'
      | 'sessions'
      | 'session'
      | 'agents'
      | 'set-mode'
      | 'inbox'
      | 'roots'
      | 'checkpoints';
  }
>;

/** A chat request refused with a stable code and a sentence naming what was wrong. */
export class ChatRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the chat's requests are answered with. */
export interface ChatServerContext {
  readonly runtime: Runtime;
  /** The local user the runtime runs as: who decides, changes modes and compacts. */
  readonly user: string;
  readonly agents: readonly string[];
}

function knownAgent(c: ChatServerContext, agent: string): string {
  if (!c.agents.includes(agent))
    throw new ChatRefused(
      'unknown_agent',
      `agent ${JSON.stringify(agent)} is not an agent of the running runtime; its agents: ${c.agents.join(', ') || '(none)'}`,
    );
  return agent;
}

function needed(value: string | undefined, what: string): string {
  if (value === undefined) throw new ChatRefused('invalid_request', `join socket: ${what} is needed`);
  return value;
}

/**
 * Answers one of the chat's join requests on the running runtime, as the embedded chat does on
 * its own runtime: messages go in attended with surface `chat`; sessions, the Inbox, the modes
 * and the checkpoints are the runtime's own (one runtime per state dir). What goes back is
 * redacted. Errors keep the runtime's codes (`session_busy`, `session_not_found`, …).
 */
export async function chatReply(c: ChatServerContext, r: ChatRequest): Promise<Record<string, unknown>> {
  const { runtime } = c;
  switch (r.type) {
    case 'chat-submit': {
      const agent = knownAgent(c, r.agent);
      const session = r.session ?? runtime.sessions.create(agent, 'chat').sessionId;
      const runId = await runtime.runs.submit(agent, r.text, {
        sessionId: session,
        taskId: session,
        interaction: 'attended',
        surface: 'chat',
      });
      return { runId, session };
    }
    case 'run-control': {
      const done =
        r.action === 'interrupt'
          ? runtime.runs.interrupt(r.runId)
          : r.action === 'resume'
            ? runtime.runs.resume(r.runId)
            : runtime.runs.cancel(r.runId, r.reason ?? 'the user asked');
      return { done };
    }
    case 'sessions':
      return r.op === 'list'
        ? { sessions: runtime.read.redact(runtime.sessions.list()) }
        : { session: runtime.read.redact(runtime.sessions.latest()) };
    case 'session': {
      if (r.op === 'create') {
        const agent = knownAgent(c, needed(r.agent, 'agent'));
        return { session: runtime.read.redact(runtime.sessions.create(agent, 'chat', r.session)) };
      }
      const id = needed(r.session, 'session');
      if (r.op === 'get') return { session: runtime.read.redact(runtime.sessions.get(id)) };
      return { result: runtime.read.redact(await runtime.sessions.compact(id, { surface: 'chat' })) };
    }
    case 'agents':
      return { agents: runtime.read.agents() };
    case 'set-mode':
      runtime.authority.setAgentMode(knownAgent(c, r.agent), r.mode, c.user);
      return {};
    case 'inbox':
      return { approvals: runtime.read.redact(runtime.read.pendingApprovals()) };
    case 'roots': {
      const roots = runtime.read.roots();
      if (r.agent === undefined) return { roots };
      const agent = knownAgent(c, r.agent);
      return { roots, mode: runtime.read.agents().find((a) => a.id === agent)?.mode ?? 'deny' };
    }
    case 'checkpoints':
      return { checkpoints: runtime.read.redact(runtime.runs.checkpoints({ sessionId: r.session })) };
  }
}
