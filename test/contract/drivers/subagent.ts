import { writeScenarioConfig } from '../config.ts';
import { findRun } from '../state.ts';
import { startRuntimeProcess } from './start-process.ts';
import type { CaseAgent, SurfaceDriver } from './types.ts';

/**
 * Sub-agent: every case agent runs as the child of a parent agent (`parent-<id>`, mode `allow`:
 * the widest a parent can be, so what the child may do is its own envelope met with it) whose
 * one step is `spawn_agent { profile: <id>, task: <message> }`. The parents are started by
 * one-shot scheduled tasks (unattended, so children park like any unattended run). `trigger`
 * finds the child run `spawn_agent` started.
 */
export const subagentDriver: SurfaceDriver = {
  surface: 'subagent',
  interaction: 'unattended',
  entry:
    '`spawn_agent` from a parent agent (started by a one-shot scheduled task); the case runs as the child',
  async start(scenario, folder) {
    const fireAt = new Date(Date.now() + 3000).toISOString().replace(/\.\d+Z$/, '');
    const parents: CaseAgent[] = scenario.agents
      .filter((a) => a.text !== null)
      .map((a) => {
        const d = a.delegation ?? {};
        const spawns = [
          ...(d.before ?? []).map((profile) => ({ profile, task: `first ${profile}` })),
          { ...d.request, profile: a.id, task: a.text },
        ];
        return {
          id: `parent-${a.id}`,
          mode: d.parentMode ?? 'allow',
          ...(d.parentTools ? { tools: d.parentTools } : {}),
          text: null,
          model: {
            kind: 'scripted',
            steps: [
              ...spawns.map((args, i) => ({
                respond: { kind: 'calls', calls: [{ id: `spawn${i}`, tool: 'spawn_agent', args }] },
              })),
              { respond: { kind: 'final', text: 'delegated' } },
            ],
          },
        };
      });
    const scheduled = parents.map((p) => ({
      id: `task-${p.id}`,
      agent: p.id,
      cron: fireAt,
      message: 'delegate',
      missed: 'run-once',
    }));
    const config = writeScenarioConfig(folder, scenario, { agents: parents, surfaces: { scheduled } });
    return startRuntimeProcess(config, scenario.env, () => async (agentId) => {
      const run = await findRun(
        folder.stateDir,
        (r) =>
          r.agentId === agentId && r.parentRunId !== null && r.parentRunId.startsWith(`parent-${agentId}:`),
        `the sub-agent run of ${agentId}`,
      );
      return run.runId;
    });
  },
};
