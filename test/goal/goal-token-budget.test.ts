import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelFromConfig } from '../../runtime/config/adapters/models.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { MemorySecretStore } from '../../runtime/secrets/index.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { FakeModelServer, fixture, type SeenRequest } from '../model/fake-server.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let server: FakeModelServer;
let fx: RuntimeFixture;
let rt: Runtime;

const answered = (r: SeenRequest) =>
  ((r.body.messages ?? []) as { role: string }[]).some((m) => m.role === 'tool');

beforeAll(async () => {
  server = await FakeModelServer.start();
  // Every answer reports 212 + 19 = 231 tokens. Iteration 2 asks goal_status first (two calls).
  const goalStatusCall = fixture('openai/read-file.sse').map((c, i) =>
    c
      .replace('"name":"read_file"', '"name":"goal_status"')
      .replace(/"arguments":"(?:[^"\\]|\\.)*"/, i === 0 ? '"arguments":"{}"' : '"arguments":""'),
  );
  let asked = 0;
  server.route = (req) => {
    if (answered(req)) return { sse: fixture('openai/final.sse', { TEXT: 'read it' }) };
    asked++;
    if (asked === 2) return { sse: goalStatusCall };
    return { sse: fixture('openai/final.sse', { TEXT: `not yet ${asked}` }) };
  };
  fx = runtimeFixture({
    agents: {
      worker: {
        mode: 'allow',
        tools: ['read_file', 'goal_status'],
        model: {
          provider: 'openai-compatible',
          baseUrl: `${server.url}/v1`,
          model: 'test-model',
          apiKey: { secret: 'model-key' },
        },
      },
    },
    surfaces: {
      goalLoops: [
        { id: 'g', agent: 'worker', objective: 'tidy up', maxIterations: 10, budget: { tokens: 400 } },
      ],
    },
  });
  writeFileSync(join(fx.project, 'notes.txt'), 'tangerine\n');
  rt = await start();
}, 60_000);

const start = () =>
  fx.start(modelFromConfig(fx.loaded, { retryBaseMs: 10 }), {
    secretStore: new MemorySecretStore({ 'model-key': 'sk-goal-budget-0123456789abcdef' }),
  });
afterAll(async () => {
  await rt?.stop();
  await server?.close();
  fx?.cleanup();
});

const goal = () => runtimeInternals(rt).store.goals.get('g');

/** The pending budget request of a goal iteration's run, once the goal is parked on it. */
async function parkedOn(runId: string) {
  const item = await eventually(
    () =>
      runtimeInternals(rt)
        .store.approvals.listPending()
        .find((a) => a.runId === runId),
    30_000,
    `the budget request of ${runId}`,
  );
  await eventually(() => goal()?.parked === true, 30_000, `goal g parked on ${runId}`);
  return item;
}

describe('a goal budget in tokens (streaming OpenAI-compatible server)', () => {
  it('its runs together pass it: the run that would go past it parks on a budget Inbox item (kept across a restart), approving extends that run once, denying ends the goal budget_limited', async () => {
    expect(rt.goals.control('g', 'start', 'test').result).toBe('ok');
    // Iteration 1 uses 231 of 400; iteration 2 starts with 169 left: its first call (231) passes it,
    // and it parks before its second.
    const second = 'worker:goal:g:1:2';
    const item = await parkedOn(second);
    expect(item).toMatchObject({
      kind: 'budget',
      reason: 'budget_tokens',
      args: { dimension: 'tokens', used: 231, limit: 169, grant: 400 },
    });
    expect(goal()).toMatchObject({ status: 'active', iteration: 2 });
    expect(goal()?.used.tokens).toBe(231);
    expect(runtimeInternals(rt).store.goals.iterations('g')[1]?.budget).toMatchObject({
      tokens: 169,
      grants: { tokens: 400 },
    });
    expect(server.requests).toHaveLength(2);

    // A restart keeps the run parked on its request and the goal waiting with it.
    await rt.stop();
    rt = await start();
    expect(goal()).toMatchObject({ status: 'active', parked: true, iteration: 2 });
    expect(runtimeInternals(rt).store.approvals.get(item.id)?.status).toBe('pending');

    // Approved: that run goes on once (its answer), and is billed to the goal: 231 + 462.
    expect(rt.decide(item.id, 'approved', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(second)).toMatchObject({
      status: 'completed',
      text: 'The file says: read it',
    });
    // Iteration 3 starts with nothing left: it parks before asking the model.
    const third = 'worker:goal:g:1:3';
    const again = await parkedOn(third);
    expect(again).toMatchObject({
      kind: 'budget',
      args: { dimension: 'tokens', used: 0, limit: 0, grant: 400 },
    });
    expect(goal()?.used.tokens).toBe(693);
    expect(server.requests).toHaveLength(3);
    // What goal_status told the model: no tokens left (231 billed + 231 of its own run), no cost key (no cost limit).
    const status = ((server.requests[2]?.body.messages ?? []) as { role: string; content: string }[]).find(
      (m) => m.role === 'tool',
    );
    const remaining = (JSON.parse(status?.content ?? '{}') as { remaining?: Record<string, unknown> })
      .remaining;
    expect(remaining).toEqual({ modelCalls: null, toolCalls: null, wallTimeMs: null, tokens: 0 });

    // Denied: the run ends on its budget and the goal stops budget_limited, with no iteration after.
    expect(rt.decide(again.id, 'denied', 'alice').ok).toBe(true);
    expect(await rt.waitForRun(third)).toMatchObject({ status: 'failed', reason: 'budget_tokens' });
    const done = await eventually(
      () => (goal()?.status === 'budget_limited' ? goal() : null),
      30_000,
      'goal g budget_limited',
    );
    expect(done).toMatchObject({ stopReason: 'budget_tokens', iteration: 3, parked: false });
    expect(done?.used.tokens).toBe(693);
    expect(
      runtimeInternals(rt)
        .store.goals.iterations('g')
        .map((i) => [i.outcome, i.usage?.tokens]),
    ).toEqual([
      ['completed: final_answer', 231],
      ['completed: final_answer', 462],
      ['failed: budget_tokens', undefined],
    ]);
    expect(server.requests).toHaveLength(3);
  });
});
