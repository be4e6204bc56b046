import { UsageError } from '../io.ts';

/**
 * The agent a run or chat talks to: `--agent A` (it must be one of `agents`), else the only
 * agent. `where` names what holds the agents in an error (a config file, a running runtime).
 */
export function pickAgent(agents: readonly string[], where: string, wanted: string | undefined): string {
  if (wanted !== undefined) {
    if (!agents.includes(wanted))
      throw new UsageError(
        `--agent ${JSON.stringify(wanted)} is not an agent of ${where}; agents: ${agents.join(', ') || '(none)'}`,
      );
    return wanted;
  }
  if (agents.length === 1) return agents[0] as string;
  throw new UsageError(
    agents.length === 0
      ? `${where} defines no agents (add one under "agents")`
      : `${where} has several agents; pick one with --agent (${agents.join(', ')})`,
  );
}
