import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { ModelProvider } from '../../actors/model/provider.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const list = (id: string): ScriptedStep => ({
  respond: { kind: 'calls', calls: [{ id, tool: 'list_dir', args: { path: '.' } }] },
});
const answer = (text: string): ScriptedStep => ({
  expect: { kind: 'tool.result', tool: 'list_dir' },
  respond: { kind: 'final', text },
});

/** The scripted model, each of its steps reporting 600 tokens. */
function withUsage(model: ScriptedModel): ModelProvider {
  return {
    step: async (req) => ({ ...(await model.step(req)), usage: { inputTokens: 500, outputTokens: 100 } }),
  };
}

let fx: RuntimeFixture;
let rt: Runtime;
const model = new ScriptedModel({
  calls: [list('c1'), answer('listed')],
  tokens: [list('c1'), answer('within tokens')],
  // One answer per run, each reporting 600 tokens; its sessions may use 1000 in all.
  session: [{ respond: { kind: 'final', text: 'hi' } }],
});
const provider = withUsage(model);

beforeAll(async () => {
  fx = runtimeFixture({
    agents: {
      calls: { mode: 'ask', budget: { modelCalls: 1, toolCalls: 5, wallTimeMs: 600_000 } },
      tokens: { mode: 'ask', budget: { tokens: 500 } },
      session: { mode: 'ask', sessionBudget: { tokens: 1000 } },
    },
  });
  rt = await fx.start(provider);
}, 60_000);
afterAll(async () => {
  await rt?.stop();
  fx?.cleanup();
});

/** The pending Inbox item of a run, once there, and the run parked. */
async function parkedOn(runId: string) {
  const item = await eventually(
    () =>
      runtimeInternals(rt)
        .store.approvals.listPending()
        .find((a) => a.runId === runId),
    30_000,
    `the budget request of ${runId}`,
  );
  await eventually(() => !runtimeInternals(rt).runs.isLive(runId), 30_000, `${runId} to park`);
  return item;
}

describe('an unattended budget breach parks in the Inbox (kind budget)', () => {
  it('parks at the model-call budget; approving grants +1 once and the run ends ok', async () => {
    const runId = await rt.runs.runTask('calls', 't1', 'list the folder');
    const item = await parkedOn(runId);
    expect(item).toMatchObject({
      kind: 'budget',
      tool: 'budget',
      reason: 'budget_model_calls',
      ruleId: 'budget.modelCalls',
      args: { dimension: 'modelCalls', used: 1, limit: 1, grant: 1 },
      target: 'modelCalls +1',
    });
    expect(runtimeInternals(rt).store.snapshots.get(runId)?.status).toBe('waiting_for_approval');
    // A budget request is never granted for the session or always.
    expect(() => rt.approvals.approveWithGrant(item.id, 'session', 'alice')).toThrow(/budget request/);
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'listed',
    });
    expect(rt.decide(item.id, 'denied', 'mallory')).toMatchObject({ ok: false, reason: 'already_decided' });
  });

  it('denied, the run ends failed with the budget reason (budget_limited as before)', async () => {
    const runId = await rt.runs.runTask('calls', 't2', 'list it again');
    const item = await parkedOn(runId);
    expect(rt.decide(item.id, 'denied', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'failed', reason: 'budget_model_calls' });
    // The model's answer after the denial was never asked for.
    expect(() => model.assertConsumed('calls', runId)).toThrow(/steps 1 were never asked/);
  });

  it('survives a restart parked, and the decision after it continues the run once', async () => {
    const runId = await rt.runs.runTask('calls', 't3', 'list once more');
    const item = await parkedOn(runId);
    await rt.stop();
    rt = await fx.start(provider);
    expect(runtimeInternals(rt).store.approvals.get(item.id)?.status).toBe('pending');
    expect(runtimeInternals(rt).runs.isLive(runId)).toBe(false);
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'listed' });
    model.assertConsumed('calls', runId);
  });

  it('parks at the token budget, counted from the usage the model reports; approved, +500 once', async () => {
    const runId = await rt.runs.runTask('tokens', 't4', 'list');
    const item = await parkedOn(runId);
    expect(item).toMatchObject({
      kind: 'budget',
      reason: 'budget_tokens',
      args: { dimension: 'tokens', used: 600, limit: 500, grant: 500 },
    });
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    // 1200 tokens at the end: past the extended 1000, but the run had answered by then.
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'within tokens' });
    expect(
      runtimeInternals(rt)
        .store.approvals.listPending()
        .filter((a) => a.runId === runId),
    ).toEqual([]);
  });

  it('a session budget counts the tokens of all its runs: the run that starts with none left parks before asking the model; approved, it gets the session budget once', async () => {
    const say = () => rt.runs.submit('session', 'hello', { sessionId: 'capped', interaction: 'unattended' });
    // 600 tokens, then 600 more (the second run started with 400 left: a breach is seen before a call).
    for (let i = 0; i < 2; i++)
      expect(await rt.waitForRun(await say())).toMatchObject({ status: 'completed', text: 'hi' });
    const third = await say();
    const item = await parkedOn(third);
    expect(item).toMatchObject({
      kind: 'budget',
      reason: 'budget_tokens',
      args: { dimension: 'tokens', used: 0, limit: 0, grant: 1000 },
    });
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(third)).toMatchObject({ status: 'completed', text: 'hi' });
    // Another session of the same agent has its own 1000.
    const other = await rt.runs.submit('session', 'hello', { sessionId: 'fresh', interaction: 'unattended' });
    expect(await rt.waitForRun(other)).toMatchObject({ status: 'completed', text: 'hi' });
  });
});
