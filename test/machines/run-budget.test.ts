import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, toPromise, waitFor } from 'xstate';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import { sessionSlice, sliceBudget, tokensOf, type ParentBudget } from '../../machines/run/budget.ts';
import { declinedLimit, remainingOf } from '../../machines/goal/machine.ts';
import { runMachine } from '../../machines/run/machine.ts';
import type { Decision } from '../../policy/decision.ts';
import { runs } from '../support/laws.ts';
import type {
  ExecuteInput,
  ModelUsage,
  Observation,
  OpenBudgetInput,
  RunContext,
  RunInput,
} from '../../machines/run/types.ts';

const ALLOW: Decision = {
  decision: 'allow',
  reason: 'mode_allow',
  risk: 'read',
  rule: { id: 'mode.allow', source: 'mode' },
  targets: [],
  humanRequired: false,
  step: 5,
};

/** The pure run machine with a scripted model (each step reporting `usage`), every call allowed. */
function wired(script: ScriptedStep[], opened: OpenBudgetInput[], usage?: ModelUsage) {
  const model = new ScriptedModel({ a: script });
  const machine = runMachine.provide({
    actors: {
      modelStep: fromPromise(async ({ input }: { input: { context: RunContext } }) => ({
        ...(await model.step({
          runId: input.context.runId,
          agentId: 'a',
          step: input.context.steps,
          transcript: input.context.transcript,
        })),
        ...(usage ? { usage } : {}),
      })),
      decide: fromPromise(async (): Promise<Decision> => ALLOW),
      executeTool: fromPromise(async ({ input }: { input: ExecuteInput }): Promise<Observation> => ({
        kind: 'tool.result',
        callId: input.call.id,
        tool: input.call.tool,
        content: 'ok',
      })),
      openBudgetRequest: fromPromise(async ({ input }: { input: OpenBudgetInput }) => {
        opened.push(input);
        return { approvalId: input.approvalId };
      }),
    },
  });
  return { machine, model };
}

const input = (over: Partial<RunInput> = {}): RunInput => ({
  runId: 'r1',
  agentId: 'a',
  sessionId: 's',
  taskId: null,
  parentRunId: null,
  surface: 'test',
  interaction: 'unattended',
  message: 'hello',
  budget: { modelCalls: 1, toolCalls: 10, wallTimeMs: 60_000 },
  onBudget: 'ask',
  startedAt: 0,
  ...over,
});

const read = (id: string) => ({
  respond: { kind: 'calls' as const, calls: [{ id, tool: 'read_file', args: { path: 'a' } }] },
});
const done = { respond: { kind: 'final' as const, text: 'done' } };

describe('run budgets park instead of failing', () => {
  it('parks at the model-call budget; approving grants +N once and the run ends ok', async () => {
    const opened: OpenBudgetInput[] = [];
    const { machine, model } = wired([read('c1'), done], opened);
    const actor = createActor(machine, { input: input() }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_budget'));
    expect(opened.map((o) => [o.approvalId, o.request])).toEqual([
      ['bud:r1:0', { dimension: 'modelCalls', used: 1, limit: 1, grant: 1 }],
    ]);
    // A decision for another request changes nothing.
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:9', decision: 'approved', user: 'u' });
    expect(actor.getSnapshot().matches('waiting_for_budget')).toBe(true);
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision: 'approved', user: 'u' });
    expect(await toPromise(actor)).toEqual({ status: 'completed', reason: 'final_answer', text: 'done' });
    const ctx = actor.getSnapshot().context;
    expect(ctx.budget.modelCalls).toBe(2);
    expect(ctx.granted).toEqual({ modelCalls: 1 });
    model.assertConsumed('a', 'r1');
  });

  it('a run whose session has nothing left parks before its first model call; approving grants what `grants` says, once', async () => {
    const opened: OpenBudgetInput[] = [];
    const usage = { inputTokens: 300, outputTokens: 100 };
    const { machine, model } = wired([read('c1'), done], opened, usage);
    const sliced = sessionSlice(
      { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 },
      { tokens: 1000 },
      { inputTokens: 900, outputTokens: 300 },
    );
    expect(sliced).toEqual({
      budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000, tokens: 0 },
      grants: { tokens: 1000 },
    });
    const actor = createActor(machine, { input: input(sliced) }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_budget'));
    expect(opened.map((o) => o.request)).toEqual([{ dimension: 'tokens', used: 0, limit: 0, grant: 1000 }]);
    expect(actor.getSnapshot().context.used.modelCalls).toBe(0);
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision: 'approved', user: 'u' });
    expect(await toPromise(actor)).toEqual({ status: 'completed', reason: 'final_answer', text: 'done' });
    expect(actor.getSnapshot().context.budget.tokens).toBe(1000);
    model.assertConsumed('a', 'r1');
  });

  it('denied (or expired), the run ends failed with the budget reason, as a breach did before', async () => {
    for (const decision of ['denied', 'expired'] as const) {
      const { machine } = wired([read('c1'), done], []);
      const actor = createActor(machine, { input: input() }).start();
      await waitFor(actor, (s) => s.matches('waiting_for_budget'));
      actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision, user: 'u' });
      const out = await toPromise(actor);
      expect(out).toMatchObject({ status: 'failed', reason: 'budget_model_calls' });
      expect(out.message).toContain(decision === 'expired' ? 'expired' : 'declined');
    }
  });

  it('a run that fails on its budget (onBudget absent: a goal, a sub-agent) still fails at once', async () => {
    const { machine } = wired([read('c1'), done], []);
    const { onBudget: _, ...failing } = input();
    const out = await toPromise(createActor(machine, { input: failing }).start());
    expect(out).toMatchObject({ status: 'failed', reason: 'budget_model_calls' });
  });

  it('a failing run (a goal iteration) parks on the dimensions of its askFor only: tokens park, model calls still fail', async () => {
    const { onBudget: _, ...failing } = input();
    const usage = { inputTokens: 150, outputTokens: 50 };
    // Tokens past the goal's slice: parks, and approving grants what `grants` says.
    const opened: OpenBudgetInput[] = [];
    const a = wired([read('c1'), done], opened, usage);
    const parked = createActor(a.machine, {
      input: {
        ...failing,
        budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000, tokens: 100 },
        grants: { tokens: 500 },
        askFor: ['tokens'],
      },
    }).start();
    await waitFor(parked, (s) => s.matches('waiting_for_budget'));
    expect(opened.map((o) => o.request)).toEqual([
      { dimension: 'tokens', used: 200, limit: 100, grant: 500 },
    ]);
    parked.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision: 'approved', user: 'u' });
    expect(await toPromise(parked)).toMatchObject({ status: 'completed' });
    a.model.assertConsumed('a', 'r1');
    // The model-call budget of the same run still ends it at once (its goal stops on it).
    const b = wired([read('c1'), done], opened, usage);
    const failed = createActor(b.machine, {
      input: {
        ...failing,
        budget: { modelCalls: 1, toolCalls: 10, wallTimeMs: 60_000, tokens: 1000 },
        askFor: ['tokens'],
      },
    }).start();
    expect(await toPromise(failed)).toMatchObject({ status: 'failed', reason: 'budget_model_calls' });
    expect(opened).toHaveLength(1);
  });

  it('parks at the token and the cost budget, each asked in turn, with the whole usage counted', async () => {
    const opened: OpenBudgetInput[] = [];
    const usage = { inputTokens: 900, outputTokens: 200, costUsd: 0.5 };
    const { machine } = wired([read('c1'), done], opened, usage);
    const actor = createActor(machine, {
      input: input({
        budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000, tokens: 1000, costUsd: 0.4 },
      }),
    }).start();
    await waitFor(actor, (s) => s.matches('waiting_for_budget'));
    expect(opened[0]?.request).toEqual({ dimension: 'tokens', used: 1100, limit: 1000, grant: 1000 });
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision: 'approved', user: 'u' });
    await waitFor(actor, (s) => s.matches('waiting_for_budget') && s.context.approvalId === 'bud:r1:1');
    expect(opened[1]?.request).toEqual({ dimension: 'costUsd', used: 0.5, limit: 0.4, grant: 0.4 });
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:1', decision: 'approved', user: 'u' });
    expect(await toPromise(actor)).toMatchObject({ status: 'completed' });
    expect(tokensOf(actor.getSnapshot().context.tokens)).toBe(2200);
  });

  it('a deadline during a model call parks for wall time; the grant counts from the decision', async () => {
    const opened: OpenBudgetInput[] = [];
    let release: () => void = () => {};
    const model = new ScriptedModel({ a: [done] });
    const machine = runMachine.provide({
      actors: {
        modelStep: fromPromise(async ({ input }: { input: { context: RunContext } }) => {
          if (input.context.budgetAsks === undefined) await new Promise<void>((r) => (release = r));
          return model.step({ runId: 'r1', agentId: 'a', step: 0, transcript: input.context.transcript });
        }),
        openBudgetRequest: fromPromise(async ({ input }: { input: OpenBudgetInput }) => {
          opened.push(input);
          return { approvalId: input.approvalId };
        }),
      },
    });
    const actor = createActor(machine, {
      input: input({ budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 1000 } }),
    });
    actor.start();
    actor.send({ type: 'DEADLINE' });
    expect(actor.getSnapshot().matches('waiting_for_budget')).toBe(true);
    // A deadline while it waits does not end it.
    actor.send({ type: 'DEADLINE' });
    expect(actor.getSnapshot().matches('waiting_for_budget')).toBe(true);
    release();
    actor.send({
      type: 'APPROVAL_DECIDED',
      approvalId: 'bud:r1:0',
      decision: 'approved',
      user: 'u',
      decidedAt: 5000,
    });
    expect(await toPromise(actor)).toMatchObject({ status: 'completed', text: 'done' });
    expect(opened[0]?.request.dimension).toBe('wallTimeMs');
    expect(actor.getSnapshot().context.budget.wallTimeMs).toBe(6000);
  });

  it('a deadline during a tool call lets the call finish, then parks before the next step', async () => {
    const opened: OpenBudgetInput[] = [];
    let finish: () => void = () => {};
    const model = new ScriptedModel({ a: [read('c1'), done] });
    const machine = runMachine.provide({
      actors: {
        modelStep: fromPromise(async ({ input }: { input: { context: RunContext } }) =>
          model.step({
            runId: 'r1',
            agentId: 'a',
            step: input.context.steps,
            transcript: input.context.transcript,
          }),
        ),
        decide: fromPromise(async (): Promise<Decision> => ALLOW),
        executeTool: fromPromise(async ({ input }: { input: ExecuteInput }): Promise<Observation> => {
          await new Promise<void>((r) => (finish = r));
          return { kind: 'tool.result', callId: input.call.id, tool: input.call.tool, content: 'ok' };
        }),
        openBudgetRequest: fromPromise(async ({ input }: { input: OpenBudgetInput }) => {
          opened.push(input);
          return { approvalId: input.approvalId };
        }),
      },
    });
    const actor = createActor(machine, {
      input: input({ budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 1000 } }),
    });
    actor.start();
    await waitFor(actor, (s) => s.matches({ running: { acting: 'executing' } }));
    actor.send({ type: 'DEADLINE' });
    expect(actor.getSnapshot().matches({ running: { acting: 'executing' } })).toBe(true);
    finish();
    await waitFor(actor, (s) => s.matches('waiting_for_budget'));
    expect(actor.getSnapshot().context.transcript.at(-1)).toMatchObject({ role: 'observation' });
    actor.send({ type: 'APPROVAL_DECIDED', approvalId: 'bud:r1:0', decision: 'denied', user: 'u' });
    expect(await toPromise(actor)).toMatchObject({ status: 'failed', reason: 'budget_wall_time' });
  });
});

const parent: fc.Arbitrary<ParentBudget & { now: number }> = fc
  .record({
    modelCalls: fc.nat(100),
    toolCalls: fc.nat(100),
    wallTimeMs: fc.nat(1_000_000),
    tokens: fc.option(fc.nat(1_000_000), { nil: undefined }),
    costUsd: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: undefined }),
    usedModel: fc.nat(150),
    usedTool: fc.nat(150),
    input: fc.nat(1_000_000),
    output: fc.nat(1_000_000),
    cost: fc.double({ min: 0, max: 150, noNaN: true }),
    startedAt: fc.nat(1_000_000),
    elapsed: fc.nat(2_000_000),
  })
  .map((r) => ({
    budget: {
      modelCalls: r.modelCalls,
      toolCalls: r.toolCalls,
      wallTimeMs: r.wallTimeMs,
      ...(r.tokens === undefined ? {} : { tokens: r.tokens }),
      ...(r.costUsd === undefined ? {} : { costUsd: r.costUsd }),
    },
    used: { modelCalls: r.usedModel, toolCalls: r.usedTool },
    tokens: { inputTokens: r.input, outputTokens: r.output, costUsd: r.cost },
    startedAt: r.startedAt,
    now: r.startedAt + r.elapsed,
  }));

describe('a sub-agent budget is a slice of what its parent has left (law)', () => {
  it('never exceeds what the parent has left in any dimension, and is never negative', () => {
    fc.assert(
      fc.property(parent, (p) => {
        const child = sliceBudget(p, p.now);
        const left = (limit: number, used: number) => Math.max(0, limit - used);
        expect(child.modelCalls).toBeLessThanOrEqual(left(p.budget.modelCalls, p.used.modelCalls));
        expect(child.toolCalls).toBeLessThanOrEqual(left(p.budget.toolCalls, p.used.toolCalls));
        expect(child.wallTimeMs).toBeLessThanOrEqual(left(p.startedAt + p.budget.wallTimeMs, p.now));
        if (p.budget.tokens !== undefined)
          expect(child.tokens).toBeLessThanOrEqual(left(p.budget.tokens, tokensOf(p.tokens)));
        else expect(child.tokens).toBeUndefined();
        if (p.budget.costUsd !== undefined)
          expect(child.costUsd).toBeLessThanOrEqual(left(p.budget.costUsd, p.tokens?.costUsd ?? 0));
        else expect(child.costUsd).toBeUndefined();
        for (const v of Object.values(child)) expect(v).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: runs(100) },
    );
  });

  it('a grandchild is a slice of its parent slice: never more than the grandparent had left', () => {
    fc.assert(
      fc.property(parent, fc.nat(50), fc.nat(50), fc.nat(10_000), (p, m, t, later) => {
        const child = sliceBudget(p, p.now);
        const grand = sliceBudget(
          { budget: child, used: { modelCalls: m, toolCalls: t }, startedAt: p.now },
          p.now + later,
        );
        expect(grand.modelCalls).toBeLessThanOrEqual(child.modelCalls);
        expect(grand.toolCalls).toBeLessThanOrEqual(child.toolCalls);
        expect(grand.wallTimeMs).toBeLessThanOrEqual(child.wallTimeMs);
        expect(grand.tokens ?? 0).toBeLessThanOrEqual(child.tokens ?? 0);
      }),
      { numRuns: runs(100) },
    );
  });
});

const sessionCase = fc.record({
  own: fc.record(
    {
      tokens: fc.integer({ min: 1, max: 100_000 }),
      costUsd: fc.double({ min: 0.01, max: 100, noNaN: true }),
    },
    { requiredKeys: [] },
  ),
  limits: fc.record(
    {
      tokens: fc.integer({ min: 1, max: 100_000 }),
      costUsd: fc.double({ min: 0.01, max: 100, noNaN: true }),
    },
    { requiredKeys: [] },
  ),
  used: fc.option(
    fc.record({
      inputTokens: fc.nat(80_000),
      outputTokens: fc.nat(80_000),
      costUsd: fc.double({ min: 0, max: 200, noNaN: true }),
    }),
  ),
});

describe('a session run starts within what its session has left (law)', () => {
  it('never more than the run budget nor the session left, never negative; other dimensions untouched; a cut dimension grants a positive amount', () => {
    fc.assert(
      fc.property(sessionCase, ({ own, limits, used }) => {
        const budget = { modelCalls: 5, toolCalls: 7, wallTimeMs: 1000, ...own };
        const { budget: out, grants } = sessionSlice(budget, limits, used);
        expect([out.modelCalls, out.toolCalls, out.wallTimeMs]).toEqual([5, 7, 1000]);
        const spent = { tokens: tokensOf(used ?? undefined), costUsd: used?.costUsd ?? 0 };
        for (const d of ['tokens', 'costUsd'] as const) {
          const limit = limits[d];
          if (limit === undefined) {
            expect(out[d]).toBe(own[d]);
            expect(grants[d]).toBeUndefined();
            continue;
          }
          const value = out[d] as number;
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThanOrEqual(Math.max(0, limit - spent[d]));
          if (own[d] !== undefined) expect(value).toBeLessThanOrEqual(own[d] as number);
          expect(grants[d]).toBe(own[d] ?? limit);
          expect(grants[d]).toBeGreaterThan(0);
        }
      }),
      { numRuns: runs(200) },
    );
  });
});

const REASONS = [
  'budget_tokens',
  'budget_cost',
  'budget_model_calls',
  'budget_tool_calls',
  'budget_wall_time',
  'final_answer',
  'model_error',
  'cancelled: budget_tokens',
] as const;

describe("a goal's tokens and cost (law)", () => {
  it('what is left is the limit less what its iterations spent (never negative; spent absent counts 0); only a declined request for a limit the goal sets stops it', () => {
    fc.assert(
      fc.property(
        sessionCase.map((c) => c.limits),
        fc.record(
          { tokens: fc.nat(200_000), costUsd: fc.double({ min: 0, max: 200, noNaN: true }) },
          { requiredKeys: [] },
        ),
        fc.constantFrom('completed', 'failed', 'denied') as fc.Arbitrary<'completed' | 'failed' | 'denied'>,
        fc.constantFrom(...REASONS),
        (limits, spent, status, reason) => {
          const left = remainingOf(limits, { modelCalls: 0, toolCalls: 0, wallTimeMs: 0, ...spent });
          for (const d of ['tokens', 'costUsd'] as const) {
            const limit = limits[d];
            if (limit === undefined) expect(left[d]).toBeUndefined();
            else expect(left[d]).toBe(Math.max(0, limit - (spent[d] ?? 0)));
          }
          const stop = declinedLimit(limits, { status, reason });
          const sets =
            (reason === 'budget_tokens' && limits.tokens !== undefined) ||
            (reason === 'budget_cost' && limits.costUsd !== undefined);
          expect(stop).toBe(status === 'failed' && sets ? reason : null);
          expect(declinedLimit(limits, null)).toBeNull();
        },
      ),
      { numRuns: runs(200) },
    );
  });
});
