import { fromPromise } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphOf } from '../../runtime/viz/machines.ts';
import { CallKind, RestartHarness, type Scenario } from './harness.ts';
import { check, scenarios } from './run-scenarios.ts';

/** Runs every scenario once to count its await points, then once per crash point; returns coverage. */
async function suite(h: RestartHarness, list: Scenario[]) {
  const states = new Set<string>();
  let runs = 0;
  let crashPoints = 0;
  let finalAtCrash = 0;
  for (const s of list) {
    const base = await h.run(s, `${s.name}:base`, null);
    check(h.store, s, `${s.name}:base`, base);
    for (const id of base.record.states) states.add(id);
    for (let k = 1; k <= base.points; k++) {
      const runId = `${s.name}:crash${k}`;
      const r = await h.run(s, runId, k);
      check(h.store, s, runId, r);
      for (const id of r.record.states) states.add(id);
      finalAtCrash += r.record.finalAtCrash.size;
      runs++;
    }
    crashPoints += base.points;
  }
  return { states, runs, crashPoints, finalAtCrash };
}

describe('model-based restart tests of the run machine (every scenario × every crash point)', () => {
  let h: RestartHarness;
  beforeAll(async () => {
    h = await RestartHarness.create();
  });
  afterAll(() => h.close());

  it('restored at any await point, every run keeps the invariants, and every state of the machine is visited', async () => {
    const list = scenarios();
    const { states, runs, crashPoints, finalAtCrash } = await suite(h, list);
    // Calls completed before a crash, each checked never to run again after it.
    expect(finalAtCrash).toBeGreaterThan(100);
    const graph = graphOf('run');
    const atomic = (graph?.states ?? [])
      .filter((s) => s.type === 'atomic' || s.type === 'final')
      .map((s) => s.id);
    const missing = atomic.filter((id) => !states.has(id));
    // A new state of the machine must be reached by some scenario (or this fails and says which).
    expect(missing, `states no scenario reaches (of ${atomic.length})`).toEqual([]);
    expect(runs).toBe(crashPoints);
    // The figures recorded in the README (scenarios, crash points, states): at least this much.
    expect(list.length).toBeGreaterThanOrEqual(60);
    expect(crashPoints).toBeGreaterThanOrEqual(500);
  }, 300_000);
});

/** The scenarios of one call of each kind (and none): a human's cancel and a passed deadline at each of their points. */
const single = () =>
  scenarios().filter((s) => s.steps.length === 0 || (s.steps.length === 1 && s.steps[0]?.length === 1));

describe('model-based tests of the run machine: cancel and deadline at every await point', () => {
  let h: RestartHarness;
  beforeAll(async () => {
    h = await RestartHarness.create();
  });
  afterAll(() => h.close());

  it('a cancel at any await point ends the run failed (cancelled); nothing runs after it; the invariants hold', async () => {
    let cancels = 0;
    for (const s of single()) {
      const base = await h.run(s, `${s.name}:cancel-base`, null);
      for (let k = 1; k <= base.points; k++) {
        const runId = `${s.name}:cancel${k}`;
        const r = await h.run(s, runId, null, { cancelAt: k });
        check(h.store, s, runId, r);
        expect(r.record.executedAfterEnd, `${runId}: executed after the cancel`).toEqual([]);
        if (r.record.cancelled) {
          expect(r.outcome, runId).toMatchObject({ status: 'failed', reason: 'cancelled: mbt' });
          cancels++;
        } else expect(r.outcome, `${runId}: not live when cancelled`).toEqual(base.outcome);
      }
    }
    expect(cancels).toBeGreaterThanOrEqual(40);
  }, 300_000);

  it('a deadline that passed while the process was down ends the restored run failed (budget_wall_time); nothing runs after it', async () => {
    let restores = 0;
    const wrong: string[] = [];
    for (const s of single()) {
      const base = await h.run(s, `${s.name}:deadline-base`, null);
      for (let k = 1; k <= base.points; k++) {
        const runId = `${s.name}:deadline${k}`;
        const r = await h.run(s, runId, k, { deadlinePassed: true });
        check(h.store, s, runId, r);
        if (r.record.executedAfterEnd.length > 0 || r.outcome.reason !== 'budget_wall_time')
          wrong.push(
            `${runId} of ${base.points}: ${r.outcome.status} ${r.outcome.reason} after ${JSON.stringify(r.record.executedAfterEnd)}`,
          );
        restores++;
      }
    }
    expect(wrong).toEqual([]);
    expect(restores).toBeGreaterThanOrEqual(40);
  }, 300_000);
});

describe('the model-based suite finds a broken machine', () => {
  it('an executor that bypasses the ledger (re-runs the effect on restore) is caught', async () => {
    const mutant = await RestartHarness.create((deps) => ({
      executeTool: fromPromise(
        async ({
          input,
        }: {
          input: {
            runId: string;
            call: { id: string; tool: string; args: unknown };
            decision: never;
            idempotencyKey: string;
          };
        }) => {
          const ex = deps.executors[input.call.tool];
          if (ex === undefined) throw new Error('no executor');
          const content = await ex.execute(
            input.call.args as Record<string, unknown>,
            {
              ...deps.contextFor(input.runId),
              runId: input.runId,
              callId: input.call.id,
              idempotencyKey: input.idempotencyKey,
              decision: input.decision,
            } as never,
          );
          return { kind: 'tool.result', callId: input.call.id, tool: input.call.tool, content };
        },
      ),
    }));
    try {
      await expect(
        suite(mutant, [{ name: 'approve-ok', steps: [[CallKind.approveOk]], toolBudget: 5, modelBudget: 5 }]),
      ).rejects.toThrow(/executions/);
    } finally {
      mutant.close();
    }
  }, 120_000);
});
