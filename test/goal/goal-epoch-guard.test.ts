import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, Redactor, type Store } from '../../store/index.ts';

let dir: string | null = null;
let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const USAGE = { modelCalls: 4, toolCalls: 3, wallTimeMs: 900, tokens: 1200, costUsd: 0.25 };
const BUDGET = { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 };
const fields = (status: 'active' | 'cancelled', iteration: number) => ({
  status,
  stopReason: status === 'cancelled' ? 'cancelled_by_human' : null,
  parked: false,
  iteration,
  used: USAGE,
  evidence: null,
  snapshot: { value: status },
});

function open(): Store {
  dir = mkdtempSync(join(tmpdir(), 'snotra-goal-epoch-'));
  return openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
}

describe('goal accounting is guarded by the goal’s epoch (a real SQLite file)', () => {
  it('a stale iteration of a replaced goal bills, saves, claims and records nothing; the current one does, once', () => {
    store = open();
    const goals = store.goals;
    const begin = () =>
      goals.begin({ goalId: 'g', agentId: 'worker', objective: 'x', maxIterations: 5, budget: {} });
    expect(begin()).toMatchObject({ ok: true, goal: { epoch: 1 } });
    const oldRun = 'worker:goal:g:1:1';
    goals.recordIteration({ goalId: 'g', epoch: 1, iteration: 1, runId: oldRun, budget: BUDGET });
    // A start while the goal is active is refused: it cannot replace a live goal.
    expect(begin()).toEqual({ ok: false, status: 'active' });
    // The human cancels epoch 1 while its run still goes on, then starts the goal again.
    expect(goals.save('g', 1, fields('cancelled', 1))).toBe(true);
    expect(begin()).toMatchObject({ ok: true, goal: { epoch: 2, iteration: 0, status: 'active' } });
    const fresh = { modelCalls: 0, toolCalls: 0, wallTimeMs: 0, tokens: 0, costUsd: 0 };
    expect(goals.get('g')?.used).toEqual(fresh);

    // The old iteration's run ends late: every write under epoch 1 changes nothing.
    expect(goals.endIteration('g', 1, 1, 'completed: final_answer', USAGE)).toBe(false);
    expect(goals.billStopped('g', 1, USAGE)).toBe(false);
    expect(goals.save('g', 1, fields('active', 3))).toBe(false);
    expect(goals.claim(oldRun, 'late evidence')).toEqual({ ok: false, reason: 'stale_iteration' });
    expect(() =>
      goals.recordIteration({
        goalId: 'g',
        epoch: 1,
        iteration: 2,
        runId: 'worker:goal:g:1:2',
        budget: BUDGET,
      }),
    ).toThrow(/epoch 1 is not current \(2\)/);
    expect(goals.get('g')).toMatchObject({
      epoch: 2,
      status: 'active',
      iteration: 0,
      used: fresh,
      evidence: null,
    });
    expect(goals.iteration('g', 1, 1)).toMatchObject({ status: 'started', usage: null, claim: null });

    // The benign look-alike: the current epoch's iteration ends and bills, exactly once.
    const run = 'worker:goal:g:2:1';
    goals.recordIteration({ goalId: 'g', epoch: 2, iteration: 1, runId: run, budget: BUDGET });
    expect(goals.claim(run, 'tests pass')).toMatchObject({ ok: true, epoch: 2, iteration: 1 });
    expect(goals.endIteration('g', 2, 1, 'completed: final_answer', USAGE)).toBe(true);
    expect(goals.endIteration('g', 2, 1, 'completed: final_answer', USAGE)).toBe(false);
    expect(goals.iteration('g', 2, 1)).toMatchObject({ status: 'ended', usage: USAGE, claim: 'tests pass' });
    expect(goals.save('g', 2, fields('active', 1))).toBe(true);
    expect(goals.get('g')).toMatchObject({ epoch: 2, iteration: 1, used: USAGE });
    // A stopped goal of the current epoch takes a late run's spend; a live one does not.
    expect(goals.billStopped('g', 2, USAGE)).toBe(false);
    expect(goals.save('g', 2, fields('cancelled', 1))).toBe(true);
    expect(goals.billStopped('g', 2, USAGE)).toBe(true);
    expect(goals.get('g')?.used).toEqual({
      modelCalls: 8,
      toolCalls: 6,
      wallTimeMs: 1800,
      tokens: 2400,
      costUsd: 0.5,
    });
  });
});
