import { expect } from 'vitest';
import { call } from '../../sidecar/client.ts';
import { eventually } from '../../support/runtime.ts';
import { writeScenarioConfig } from '../config.ts';
import { findRun, readState } from '../state.ts';
import { startRuntimeProcess } from './start-process.ts';
import type { SurfaceDriver } from './types.ts';

/**
 * Goal: `snotra start` with one goal loop per case agent (`surfaces.goalLoops[]`, goal id
 * `goal-<agent id>`: a goal may not share an agent's id, objective = the case's message, `maxIterations: 1`: the scripted model answers a run step
 * by step, so a second iteration would play the script again), started by the human's
 * `POST /v1/goals/:id/start` on the sidecar. The goal machine starts the iteration's unattended
 * run (surface `goal`, task `goal:<id>`), whose run id derives from the iteration's identity.
 * When the run completes, the goal must have accounted exactly that one iteration and stopped
 * at its cap (`budget_limited: max_iterations`: the script never claims completion).
 */
/** The goal of a case agent. */
const goalOf = (agentId: string): string => `goal-${agentId}`;

export const goalDriver: SurfaceDriver = {
  surface: 'goal',
  interaction: 'unattended',
  entry:
    '`snotra start` with one `surfaces.goalLoops[]` goal per case (`maxIterations: 1`); `POST /v1/goals/:id/start` on the sidecar; the goal machine starts the run',
  async start(scenario, folder) {
    const goalLoops = scenario.agents
      .filter((a) => a.text !== null)
      .map((a) => ({ id: goalOf(a.id), agent: a.id, objective: a.text, maxIterations: 1 }));
    const config = writeScenarioConfig(folder, scenario, { surfaces: { goalLoops } });
    const started = new Map<string, string>();
    const rt = await startRuntimeProcess(config, scenario.env, (self) => async (agentId) => {
      const goalId = goalOf(agentId);
      if (!goalLoops.some((g) => g.id === goalId)) throw new Error(`goal: agent ${agentId} has no goal`);
      const { port, token } = self.sidecar();
      const r = await call(port, 'POST', `/v1/goals/${encodeURIComponent(goalId)}/start`, {
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      if (r.status !== 200) throw new Error(`goal start ${goalId}: HTTP ${r.status} ${r.text}`);
      const goal = (r.json() as { goal: { epoch: number; status: string } }).goal;
      expect(goal.status).toBe('active');
      const runId = `${agentId}:goal:${goalId}:${goal.epoch}:1`;
      const run = await findRun(folder.stateDir, (x) => x.runId === runId, `the goal run ${runId}`);
      expect(run).toMatchObject({ agentId, surface: 'goal', parentRunId: null });
      started.set(runId, goalId);
      return runId;
    });
    rt.settled = async (runId, outcome) => {
      const goalId = started.get(runId);
      if (goalId === undefined) return; // a child of the goal's run: the goal sees only its own run
      const goal = await eventually(
        () =>
          readState(folder.stateDir, (s) => {
            const g = s.goals.get(goalId);
            return g !== null && g.status !== 'active' ? g : undefined;
          }) ?? undefined,
        60_000,
        `goal ${goalId} to stop after its iteration`,
      );
      expect(goal).toMatchObject({ status: 'budget_limited', stopReason: 'max_iterations', iteration: 1 });
      expect(goal.parked).toBe(false);
      const its = readState(folder.stateDir, (s) => s.goals.iterations(goalId, goal.epoch)) ?? [];
      expect(its.map((i) => [i.iteration, i.runId, i.status, i.outcome])).toEqual([
        [1, runId, 'ended', `${outcome.status}: ${outcome.reason}`],
      ]);
    };
    return rt;
  },
};
