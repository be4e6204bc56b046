/** An unattended message to an agent, as surfaces publish it on the agent queue (tests). */
export const agentMessage = (id: string, text = 'hello') => ({
  messageId: id,
  sessionId: 's',
  taskId: null,
  parentRunId: null,
  surface: 'test',
  interaction: 'unattended' as const,
  text,
});
