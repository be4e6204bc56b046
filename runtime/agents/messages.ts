import type { AgentMessage } from '../../machines/agent/machine.ts';
import { makeSessionId } from '../../machines/run/run-id.ts';
import type { Interaction } from '../../policy/risk.ts';
import type { SubmitOptions } from '../boot/options.ts';

/** A message to an agent as `AgentPool.send` takes it. */
export type OutgoingMessage = Omit<AgentMessage, 'type'>;

/**
 * A chat message (`chat`): attended unless told otherwise, in its own session unless one is
 * given; a durable conversation.
 */
export function chatMessage(
  messageId: string,
  text: string,
  opts: { sessionId?: string; interaction?: Interaction },
): OutgoingMessage {
  return {
    messageId,
    sessionId: opts.sessionId ?? makeSessionId('chat', messageId),
    taskId: null,
    parentRunId: null,
    surface: 'chat',
    interaction: opts.interaction ?? 'attended',
    text,
    conversation: true,
  };
}

/**
 * A run started from a surface (`submit`): surface `cli` and attended unless told otherwise; a
 * durable conversation unless `conversation: false`.
 */
export function submitMessage(messageId: string, text: string, opts: SubmitOptions): OutgoingMessage {
  return {
    messageId,
    sessionId: opts.sessionId ?? makeSessionId('cli', messageId),
    taskId: opts.taskId ?? null,
    parentRunId: null,
    surface: opts.surface ?? 'cli',
    interaction: opts.interaction ?? 'attended',
    text,
    conversation: opts.conversation ?? true,
  };
}

/** An unattended run of a task (`runTask`, the scheduler): the task's session, surface `scheduled`. */
export function taskMessage(messageId: string, taskId: string, text: string): OutgoingMessage {
  return {
    messageId,
    sessionId: makeSessionId('task', taskId),
    taskId,
    parentRunId: null,
    surface: 'scheduled',
    interaction: 'unattended',
    text,
  };
}
