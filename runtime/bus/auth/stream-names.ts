/**
 * The JetStream names an actor's grant refers to. They mirror `runtime/agent-queue.ts` (the
 * stream of agent messages and one durable consumer per agent); `test/bus-auth` checks they agree.
 */
export const AGENT_STREAM_NAME = 'SNOTRA_AGENT_MESSAGES';

/** The durable consumer of an agent's messages. */
export function agentConsumerName(agentId: string): string {
  return `agent_${agentId}`;
}
