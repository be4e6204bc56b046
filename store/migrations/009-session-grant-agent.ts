import type { Migration } from './migration.ts';

/**
 * Version 9: a session approval belongs to the agent it was given to, not to every agent that
 * runs in the same session. Before, a grant was matched on the session id alone, so "allow
 * write_file for this session" given on one agent's card also let another agent of the same
 * session (a chat window talking to several agents, an embedding reusing a session id) write
 * without asking. Older rows have no agent (NULL) and match no agent: they fail closed, and a
 * session approval only lives as long as its session anyway.
 */
export const sessionGrantAgent: Migration = {
  version: 9,
  name: 'session-grant-agent',
  sql: `ALTER TABLE session_approvals ADD COLUMN agent_id TEXT;`,
};
