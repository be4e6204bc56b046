import { describe, expect, it } from 'vitest';
import { goalFields, storedGoalFields, type GoalView } from '../../runtime/inspect/nodes.ts';
import type { GoalRecord } from '../../store/index.ts';
import { renderTree } from '../../surfaces/cli/inspect/render.ts';

const view = (budget: GoalView['budget'], used: Partial<GoalView['used']> = {}): GoalView => ({
  goalId: 'g',
  agentId: 'worker',
  state: 'active.running',
  status: 'active',
  parked: false,
  iteration: 2,
  maxIterations: 5,
  budget,
  used: { modelCalls: 3, toolCalls: 1, ...used },
});

/** The line `snotra inspect` prints for a goal node. */
const line = (g: GoalView) =>
  renderTree({ seq: 1, actors: [{ ...goalFields(g), children: [] }] }, null).split('\n')[1] ?? '';

describe("a goal node's tokens and cost (the actor tree, snotra inspect)", () => {
  it('shows tokens and cost used against the limits the goal sets', () => {
    const g = view({ modelCalls: 12, tokens: 400, costUsd: 0.05 }, { tokens: 231, costUsd: 0.0123 });
    expect(goalFields(g).budgets).toEqual({
      iterations: { used: 2, limit: 5 },
      modelCalls: { used: 3, limit: 12 },
      toolCalls: { used: 1, limit: null },
      tokens: { used: 231, limit: 400 },
      costUsd: { used: 0.0123, limit: 0.05 },
    });
    expect(line(g)).toContain(
      '[iterations 2/5, modelCalls 3/12, toolCalls 1/∞, tokens 231/400, cost $0.0123/$0.05]',
    );
  });

  it('shows what was spent without a limit as unlimited, and a sum of prices without float noise', () => {
    const g = view({}, { tokens: 90, costUsd: 0.1 + 0.2 });
    expect(goalFields(g).budgets).toMatchObject({
      tokens: { used: 90, limit: null },
      costUsd: { used: 0.3, limit: null },
    });
    expect(line(g)).toContain('tokens 90/∞, cost $0.30/∞');
  });

  it('has no tokens or cost entry for a goal that neither limits nor spent them (a goal stored before version 18)', () => {
    for (const g of [view({ modelCalls: 12 }), view({}, { tokens: 0, costUsd: 0 })]) {
      expect(Object.keys(goalFields(g).budgets ?? {})).toEqual(['iterations', 'modelCalls', 'toolCalls']);
      expect(line(g)).not.toMatch(/tokens|cost/);
    }
  });

  it('a stored goal (at boot, or stopped) shows its stored tokens and cost', () => {
    const record = {
      goalId: 'g',
      epoch: 1,
      agentId: 'worker',
      objective: 'x',
      status: 'cancelled',
      stopReason: 'cancelled_by_human',
      parked: false,
      iteration: 1,
      maxIterations: 3,
      budget: { tokens: 400, costUsd: 0.05 },
      used: { modelCalls: 1, toolCalls: 0, wallTimeMs: 10, tokens: 231, costUsd: 0.0123 },
      evidence: null,
      startedAt: 0,
      updatedAt: 0,
    } satisfies GoalRecord;
    expect(storedGoalFields(record).budgets).toMatchObject({
      tokens: { used: 231, limit: 400 },
      costUsd: { used: 0.0123, limit: 0.05 },
    });
  });
});
