import type { AgentMessage } from '../../machines/agent/machine.ts';
import { makeRunId } from '../../machines/run/run-id.ts';
import type { Sessions } from './sessions.ts';

/**
 * Sends a surface's message; a conversation's session is compacted first when its history would
 * not fit the model's window, then reserved for its run (refused with `SessionBusyError` while
 * another run holds it) and given back when the send fails.
 */
export async function sendInSession(
  sessions: Sessions,
  send: (agentId: string, message: Omit<AgentMessage, 'type'>) => Promise<void>,
  agentId: string,
  message: Omit<AgentMessage, 'type'>,
): Promise<void> {
  if (message.conversation !== true) return send(agentId, message);
  // Compacted first when the history would not fit the model's window (never throws).
  await sessions.beforeMessage(message.sessionId, agentId, message.text);
  const runId = makeRunId(agentId, message.messageId);
  sessions.reserve(message.sessionId, runId, {
    agentId,
    surface: message.surface,
    firstMessage: message.text,
  });
  try {
    await send(agentId, message);
  } catch (err) {
    sessions.unreserve(message.sessionId, runId);
    throw err;
  }
}
