import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goalMachine } from '../../machines/goal/machine.ts';
import { graphOf } from '../../runtime/viz/machines.ts';
import { GoalRestartHarness, type GoalRunResult, type GoalScenario, type WorldStep } from './goal-harness.ts';

/** The world's paths: every way an iteration can go, the human's controls, and combinations. */
const PATHS: readonly (readonly WorldStep[])[] = [
  [],
  ['park', 'unpark'],
  ['claim'],
  ['end', 'claim'],
  ['fail'],
  ['cut'],
  ['pause'],
  ['pause', 'resume'],
  ['cancel'],
  ['park', 'cancel'],
  ['park', 'pause', 'unpark'],
  ['end', 'park', 'unpark', 'claim'],
  ['park', 'claim', 'unpark'],
  ['early'],
  ['end', 'early', 'claim'],
];
const BUDGETS: readonly GoalScenario['budget'][] = [
  {},
  { modelCalls: 2 },
  { toolCalls: 3 },
  { modelCalls: 7, toolCalls: 7 },
];

function scenarios(): GoalScenario[] {
  const out: GoalScenario[] = [];
  for (const steps of PATHS)
    for (const budget of BUDGETS)
      out.push({
        name: `${steps.join('+') || 'ends'} ${JSON.stringify(budget)}`,
        steps,
        maxIterations: 4,
        budget,
      });
  return out;
}

/** The invariants of one goal run, and that it ended as the run without a crash did. */
function check(s: GoalScenario, r: GoalRunResult, base: GoalRunResult, where: string): void {
  const { goal, iterations } = r;
  // No iteration skipped, none repeated: 1..n, each with the run id of its identity, created once.
  expect(
    iterations.map((i) => i.iteration),
    where,
  ).toEqual(iterations.map((_, k) => k + 1));
  expect(
    iterations.map((i) => i.runId),
    where,
  ).toEqual(iterations.map((i) => `worker:goal:${goal.goalId}:${goal.epoch}:${i.iteration}`));
  expect([...r.creations.keys()].sort(), where).toEqual(iterations.map((i) => i.runId).sort());
  for (const [runId, n] of r.creations) expect(n, `${where}: ${runId} created`).toBe(1);
  expect(goal.iteration, where).toBe(iterations.length);
  expect(goal.iteration, where).toBeLessThanOrEqual(s.maxIterations);
  // The budget is never exceeded, and each iteration is billed exactly once.
  if (s.budget.modelCalls !== undefined)
    expect(goal.used.modelCalls, where).toBeLessThanOrEqual(s.budget.modelCalls);
  if (s.budget.toolCalls !== undefined)
    expect(goal.used.toolCalls, where).toBeLessThanOrEqual(s.budget.toolCalls);
  const billed = iterations.reduce(
    (t, i) => ({ m: t.m + (i.usage?.modelCalls ?? 0), c: t.c + (i.usage?.toolCalls ?? 0) }),
    { m: 0, c: 0 },
  );
  expect({ m: goal.used.modelCalls, c: goal.used.toolCalls }, `${where}: billed once`).toEqual(billed);
  // A crash changes nothing about how the goal ends.
  expect(
    {
      status: goal.status,
      stopReason: goal.stopReason,
      iteration: goal.iteration,
      used: goal.used,
      evidence: goal.evidence,
    },
    where,
  ).toEqual({
    status: base.goal.status,
    stopReason: base.goal.stopReason,
    iteration: base.goal.iteration,
    used: base.goal.used,
    evidence: base.goal.evidence,
  });
}

async function suite(h: GoalRestartHarness, list: readonly GoalScenario[]) {
  const states = new Set<string>();
  let restores = 0;
  for (const s of list) {
    const base = await h.run(s, null);
    check(s, base, base, `${s.name} (no crash)`);
    for (const st of base.states) states.add(st);
    for (let k = 1; k <= base.points; k++) {
      const r = await h.run(s, k);
      check(s, r, base, `${s.name} (crash at ${k})`);
      for (const st of r.states) states.add(st);
      restores++;
    }
  }
  return { states, restores };
}

describe('model-based restart tests of the goal machine (every path × every restore point)', () => {
  let h: GoalRestartHarness;
  beforeAll(() => {
    h = new GoalRestartHarness();
  });
  afterAll(() => h.close());

  it('restored at any point, no iteration is repeated or skipped, the budget holds, and the end is the same', async () => {
    const list = scenarios();
    const { states, restores } = await suite(h, list);
    const graph = graphOf('goal');
    // Transient states (only `always` transitions out) are never at rest, so never persisted.
    const transient = new Set(
      (graph?.transitions ?? []).filter((t) => t.event === 'always').map((t) => t.source),
    );
    const resting = (graph?.states ?? [])
      .filter((s) => (s.type === 'atomic' || s.type === 'final') && !transient.has(s.id))
      .map((s) => s.id);
    // A new resting state must be reached by some path (or this fails and names it).
    expect(
      resting.filter((id) => !states.has(id)),
      `resting states no path reaches (of ${resting.length})`,
    ).toEqual([]);
    // The figures in the README: at least this many paths and restores.
    expect(list.length).toBeGreaterThanOrEqual(50);
    expect(restores).toBeGreaterThanOrEqual(450);
  }, 300_000);
});

describe('the goal suite finds a broken machine', () => {
  it('a machine that accepts any run end (bills a stale iteration again) is caught', async () => {
    const mutant = new GoalRestartHarness(goalMachine.provide({ guards: { isCurrentRun: () => true } }));
    try {
      await expect(
        suite(mutant, [{ name: 'ends', steps: [], maxIterations: 3, budget: { modelCalls: 7 } }]),
      ).rejects.toThrow(/billed once/);
    } finally {
      mutant.close();
    }
  }, 120_000);
});
