import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { withGoalTools, GOAL_TOOL_NAMES } from '../../policy/goal-tools.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { BIN } from '../support/snotra-process.ts';
import { final, OfferedTools } from './support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

describe('who may control a goal', () => {
  it('a CLI started from the runtime (as an agent’s shell would be) cannot start, pause, resume or cancel a goal', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'allow' } },
      surfaces: { goalLoops: [{ id: 'g', agent: 'worker', objective: 'x', maxIterations: 1 }] },
    });
    rt = await fx.start(new OfferedTools({ worker: [final('done')] }));
    // This test process runs the runtime, so the CLI child descends from it.
    for (const action of ['start', 'pause', 'resume', 'cancel']) {
      const r = spawnSync(process.execPath, [BIN, 'goal', action, 'g', '--state-dir', fx.stateDir], {
        encoding: 'utf8',
        timeout: 30_000,
        killSignal: 'SIGKILL',
      });
      expect(r.status, action).toBe(1);
      expect(r.stderr, action).toContain('goal_control_from_agent_process');
    }
    expect(runtimeInternals(rt).store.goals.pendingControls()).toEqual([]);
    expect(runtimeInternals(rt).store.goals.get('g')).toBeNull();
  });

  it('goal tools: granted to a goal iteration only, never to a sub-agent of one or any other run', () => {
    const all = ['read_file', 'shell', ...GOAL_TOOL_NAMES];
    expect(withGoalTools(true, null, all)).toBeNull();
    expect([...(withGoalTools(true, new Set(['read_file']), all) ?? [])].sort()).toEqual([
      'goal_complete',
      'goal_status',
      'read_file',
    ]);
    expect([...(withGoalTools(false, null, all) ?? [])].sort()).toEqual(['read_file', 'shell']);
    // An agent whose own list names a goal tool still does not get it outside a goal run.
    expect([...(withGoalTools(false, new Set(['goal_complete', 'shell']), all) ?? [])]).toEqual(['shell']);
  });
});
