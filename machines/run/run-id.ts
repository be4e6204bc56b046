/**
 * The one owner of the run id format and of the message and session ids it is built from.
 *
 * A run id is `<agentId>:<messageId>`: deterministic from the agent and the message that started
 * the run, so the same message never starts two runs and a restart finds the same run. Agent ids
 * never hold a `:` (config: letters, digits, `_` and `-`), so the first `:` ends the agent id; a
 * message id may hold more (`goal:<goalId>:<epoch>:<iteration>`, `platform:…`).
 *
 * Pure functions only: no I/O, no clock.
 */

/** The parts of a run id. */
export interface RunIdParts {
  readonly agentId: string;
  readonly messageId: string;
}

/** The run id of the run an agent starts for a message. */
export function makeRunId(agentId: string, messageId: string): string {
  return `${agentId}:${messageId}`;
}

/**
 * The agent and message ids of a run id, or null when it is not one (no `:`, or an empty agent
 * or message id). `parseRunId(makeRunId(a, m))` is `{ agentId: a, messageId: m }` for every agent
 * id without a `:` and every non-empty message id.
 */
export function parseRunId(runId: string): RunIdParts | null {
  const colon = runId.indexOf(':');
  if (colon <= 0 || colon === runId.length - 1) return null;
  return { agentId: runId.slice(0, colon), messageId: runId.slice(colon + 1) };
}

/**
 * The run id of a sub-agent's run: `<parentRunId>/<callId>`, deterministic from the parent's
 * `spawn_agent` call, so a replayed call finds the child it started. (Its `parseRunId` agent is
 * the root run's agent, not necessarily the child's: read the child's agent from its context.)
 */
export function makeChildRunId(parentRunId: string, callId: string): string {
  return `${parentRunId}/${callId}`;
}

/** The surfaces whose runs get a session of their own by default. */
export type SessionKind = 'chat' | 'cli' | 'task' | 'goal';

/**
 * The session id of a run started without one: `chat:<messageId>`, `cli:<messageId>`,
 * `task:<taskId>` (every run of a task shares it), `goal:<goalId>` (every iteration of a goal).
 */
export function makeSessionId(kind: SessionKind, id: string): string {
  return `${kind}:${id}`;
}

/** The message id of a goal iteration: its identity (goal id + epoch + iteration number). */
export function iterationMessageId(goalId: string, epoch: number, iteration: number): string {
  return `goal:${goalId}:${epoch}:${iteration}`;
}

/** The parts of a goal iteration's message id. */
export interface IterationIdParts {
  readonly goalId: string;
  readonly epoch: number;
  readonly iteration: number;
}

const ITERATION_MESSAGE = /^goal:([^:]+):(\d+):(\d+)$/;

/** The goal, epoch and iteration of a goal iteration's message id, or null when it is not one. */
export function parseIterationMessageId(messageId: string): IterationIdParts | null {
  const m = ITERATION_MESSAGE.exec(messageId);
  if (m === null) return null;
  return { goalId: m[1] as string, epoch: Number(m[2]), iteration: Number(m[3]) };
}

/** The agent message id of a platform message: deterministic from platform, chat and message. */
export function platformMessageId(platformId: string, chatId: number, messageId: number): string {
  return `platform:${platformId}:${chatId}:${messageId}`;
}

/** The platform connection id of a platform message's id, or null when it is not one. */
export function platformIdOfMessageId(messageId: string): string | null {
  if (!messageId.startsWith('platform:')) return null;
  const rest = messageId.slice('platform:'.length);
  const colon = rest.indexOf(':');
  return colon < 0 ? rest : rest.slice(0, colon);
}
