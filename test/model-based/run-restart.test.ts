import { fromPromise } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphOf } from '../../runtime/viz/machines.ts';
import { assertLifecycles } from '../support/lifecycle.ts';
import { CallKind, RestartHarness, needsApproval, type Scenario } from './harness.ts';

const KINDS = Object.values(CallKind);

/** Every scenario: one step of one call of each kind, two calls of every pair of kinds, and budget limits. */
function scenarios(): Scenario[] {
  const out: Scenario[] = [{ name: 'final-only', steps: [], toolBudget: 5, modelBudget: 5 }];
  for (const a of KINDS) out.push({ name: a, steps: [[a]], toolBudget: 5, modelBudget: 5 });
  for (const a of KINDS)
    for (const b of KINDS) out.push({ name: `${a}+${b}`, steps: [[a, b]], toolBudget: 5, modelBudget: 5 });
  out.push({
    name: 'two-steps',
    steps: [[CallKind.allowOk], [CallKind.approveOk]],
    toolBudget: 5,
    modelBudget: 5,
  });
  out.push({
    name: 'tool-budget',
    steps: [[CallKind.allowOk, CallKind.approveOk]],
    toolBudget: 1,
    modelBudget: 5,
  });
  out.push({
    name: 'model-budget',
    steps: [[CallKind.allowOk], [CallKind.allowOk]],
    toolBudget: 5,
    modelBudget: 1,
  });
  return out;
}

/** The invariants of one finished run (DESIGN.md §3, invariant 10). */
function check(
  h: RestartHarness,
  s: Scenario,
  runId: string,
  r: Awaited<ReturnType<RestartHarness['run']>>,
): void {
  const where = `${s.name} (${runId})`;
  expect(['completed', 'failed', 'denied'], where).toContain(r.outcome.status);
  for (const [key, n] of r.record.executions) {
    // An idempotent read may run once more after an interruption (one restart here): never more.
    expect(n, `${where}: ${key} executions`).toBeLessThanOrEqual(2);
  }
  expect(r.record.executedBeforeApproval, `${where}: executed before its approval`).toEqual([]);
  // Denied, expired and policy-denied calls never ran; approved external calls ran at most once.
  // A denied or expired approval ends the run (`denied`): the calls after it never run.
  let ended = false;
  for (const [stepIndex, calls] of s.steps.entries()) {
    calls.forEach((kind, i) => {
      const key = `call:${runId}:s${stepIndex}c${i}`;
      const n = r.record.executions.get(key) ?? 0;
      if (kind === CallKind.deny || kind === CallKind.approvalDenied || kind === CallKind.approvalExpired)
        expect(n, `${where}: ${key} (${kind}) ran`).toBe(0);
      // Without a crash, and within budget, every allowed or approved call ran exactly once.
      const ran =
        kind === CallKind.allowOk ||
        kind === CallKind.allowFail ||
        kind === CallKind.approveOk ||
        kind === CallKind.approveFail;
      if (runId.endsWith(':base') && !s.name.includes('budget') && ran && !ended)
        expect(n, `${where}: ${key} (${kind})`).toBe(1);
      if (ended) expect(n, `${where}: ${key} (${kind}) after the run was denied`).toBe(0);
      if (kind === CallKind.approvalDenied || kind === CallKind.approvalExpired) ended = true;
      // External, not idempotent: at most once, whatever happened (the mutant test looks for this).
      if (needsApproval(kind)) expect(n, `${where}: ${key} (${kind}) executions`).toBeLessThanOrEqual(1);
    });
  }
  if (r.context !== null) {
    expect(r.context.used.toolCalls, where).toBeLessThanOrEqual(s.toolBudget);
    expect(r.context.used.modelCalls, where).toBeLessThanOrEqual(s.modelBudget);
  }
  assertLifecycles(h.store, runId);
}

/** Runs every scenario once to count its await points, then once per crash point; returns coverage. */
async function suite(h: RestartHarness, list: Scenario[]) {
  const states = new Set<string>();
  let runs = 0;
  let crashPoints = 0;
  for (const s of list) {
    const base = await h.run(s, `${s.name}:base`, null);
    check(h, s, `${s.name}:base`, base);
    for (const id of base.record.states) states.add(id);
    for (let k = 1; k <= base.points; k++) {
      const runId = `${s.name}:crash${k}`;
      const r = await h.run(s, runId, k);
      check(h, s, runId, r);
      for (const id of r.record.states) states.add(id);
      runs++;
    }
    crashPoints += base.points;
  }
  return { states, runs, crashPoints };
}

describe('model-based restart tests of the run machine (every scenario × every crash point)', () => {
  let h: RestartHarness;
  beforeAll(async () => {
    h = await RestartHarness.create();
  });
  afterAll(() => h.close());

  it('restored at any await point, every run keeps the invariants, and every state of the machine is visited', async () => {
    const list = scenarios();
    const { states, runs, crashPoints } = await suite(h, list);
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
