import { writeScenarioConfig } from '../config.ts';
import { findRun } from '../state.ts';
import { startRuntimeProcess } from './start-process.ts';
import type { SurfaceDriver } from './types.ts';

/**
 * Scheduled: `snotra start` with one one-shot task per agent (an ISO time a few seconds after
 * launch, `missed: run-once` so a slow boot still runs it once); the scheduler starts the run
 * (unattended). `trigger` finds the run the scheduler started for the agent.
 */
export const scheduledDriver: SurfaceDriver = {
  surface: 'scheduled',
  interaction: 'unattended',
  entry:
    '`snotra start` with one one-shot `surfaces.scheduled[]` task per case; the scheduler starts the run',
  async start(scenario, folder) {
    const fireAt = new Date(Date.now() + 3000).toISOString().replace(/\.\d+Z$/, '');
    const scheduled = scenario.agents
      .filter((a) => a.text !== null)
      .map((a) => ({ id: `task-${a.id}`, agent: a.id, cron: fireAt, message: a.text, missed: 'run-once' }));
    const config = writeScenarioConfig(folder, scenario, { surfaces: { scheduled } });
    const runOf = (agentId: string) =>
      findRun(
        folder.stateDir,
        (r) => r.agentId === agentId && r.surface === 'scheduled' && r.parentRunId === null,
        `the scheduled run of ${agentId}`,
      );
    const rt = await startRuntimeProcess(
      config,
      scenario.env,
      () => async (agentId) => (await runOf(agentId)).runId,
    );
    // Ready once the scheduler started every task: a case that restarts the runtime cannot cut another's start short.
    for (const t of scheduled) await runOf(t.agent);
    return rt;
  },
};
