import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GoalStatusView } from '../../actors/tools/goal.ts';
import type { GoalBudget } from '../../store/goals/types.ts';
import { goalStatusView } from '../../runtime/goals/status-view.ts';
import { openStore, Redactor, type Store } from '../../store/index.ts';

let dir: string | null = null;
let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const RUN = 'worker:goal:g:1:2';
const ITERATION = { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 };
/** What the goal's first iteration spent (billed to the goal). */
const SPENT = { modelCalls: 2, toolCalls: 1, wallTimeMs: 4_000, tokens: 231, costUsd: 0.0123 };
/** The live second iteration's run so far: one model call of 100 + 20 tokens, priced. */
const LIVE = {
  used: { modelCalls: 1, toolCalls: 0 },
  startedAt: 1_000,
  tokens: { inputTokens: 100, outputTokens: 20, costUsd: 0.002 },
};

/** A goal with `budget`, its first iteration billed, its second one's run live; what goal_status shows it. */
function statusWith(budget: GoalBudget, run: typeof LIVE | null = LIVE): GoalStatusView | null {
  dir = mkdtempSync(join(tmpdir(), 'snotra-goal-status-'));
  store = openStore({ path: join(dir, 'snotra.db'), redactor: new Redactor() });
  const goals = store.goals;
  goals.begin({ goalId: 'g', agentId: 'worker', objective: 'tidy up', maxIterations: 5, budget });
  const fields = { status: 'active', stopReason: null, parked: false, used: SPENT, evidence: null } as const;
  goals.recordIteration({
    goalId: 'g',
    epoch: 1,
    iteration: 1,
    runId: 'worker:goal:g:1:1',
    budget: ITERATION,
  });
  goals.endIteration('g', 1, 1, 'completed: final_answer', SPENT);
  goals.recordIteration({ goalId: 'g', epoch: 1, iteration: 2, runId: RUN, budget: ITERATION });
  goals.save('g', 1, { ...fields, iteration: 2, snapshot: { value: 'running' } });
  return goalStatusView(store, RUN, run, 3_000);
}

describe("goal_status's remaining (a real SQLite file)", () => {
  it('shows the tokens and cost left of a goal that limits them, counting the live run’s own calls', () => {
    const view = statusWith({ tokens: 400, costUsd: 0.05 });
    expect(view).toMatchObject({ goalId: 'g', objective: 'tidy up', iteration: 2, maxIterations: 5 });
    // 400 - 231 billed - 120 of the live run; $0.05 - 0.0123 - 0.002.
    expect(view?.remaining.tokens).toBe(49);
    expect(view?.remaining.costUsd).toBeCloseTo(0.0357, 10);
    expect(view?.remaining).toMatchObject({ modelCalls: null, toolCalls: null, wallTimeMs: null });
  });

  it('never goes below zero: a run past the limit (parked on its request) sees 0 left', () => {
    const over = { ...LIVE, tokens: { inputTokens: 300, outputTokens: 50, costUsd: 0.2 } };
    const view = statusWith({ tokens: 400, costUsd: 0.05 }, over);
    expect(view?.remaining).toMatchObject({ tokens: 0, costUsd: 0 });
  });

  it('before the run has reported usage, what is left is the goal’s own count', () => {
    const view = statusWith({ tokens: 400 }, { ...LIVE, tokens: undefined as never });
    expect(view?.remaining.tokens).toBe(169);
  });

  it('has no tokens or costUsd key for a goal without those limits (the output shape only grows)', () => {
    const view = statusWith({ modelCalls: 6, wallTimeMs: 60_000 });
    expect(view?.remaining).toEqual({ modelCalls: 3, toolCalls: null, wallTimeMs: 54_000 });
    expect(Object.keys(view?.remaining ?? {})).not.toContain('tokens');
    expect(Object.keys(view?.remaining ?? {})).not.toContain('costUsd');
  });

  it('only the limit the goal sets: tokens without cost', () => {
    expect(statusWith({ tokens: 400 })?.remaining).toEqual({
      modelCalls: null,
      toolCalls: null,
      wallTimeMs: null,
      tokens: 49,
    });
  });

  it('only the limit the goal sets: cost without tokens', () => {
    const cost = statusWith({ costUsd: 0.05 })?.remaining;
    expect(Object.keys(cost ?? {})).toEqual(['modelCalls', 'toolCalls', 'wallTimeMs', 'costUsd']);
  });
});
