import type { LoadedConfig } from '../../../runtime/index.ts';
import { UsageError } from '../io.ts';

/** The agent a run or chat talks to: `--agent A` (it must exist), else the config's only agent. */
export function pickAgent(loaded: LoadedConfig, wanted: string | undefined): string {
  const agents = Object.keys(loaded.config.agents);
  const where = loaded.file ?? 'the default config';
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
