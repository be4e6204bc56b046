// On one node a task starts without waiting for its round trip through nats-server: the run
// exists when runTask resolves, it runs once though the message also arrives through JetStream,
// and that delivery is acknowledged (nothing left in the agent's queue).
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { AGENT_STREAM } from '../../runtime/agent-queue.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

describe('a task on one node', () => {
  it('exists when runTask resolves, runs once, and its JetStream message is acknowledged', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
    });
    const tasks = 5;
    const scripted = new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'done' } }] });
    // Model steps asked per run: a run started twice would ask its step 0 twice.
    const asked = new Map<string, number>();
    rt = await fx.start({
      step(request) {
        asked.set(request.runId, (asked.get(request.runId) ?? 0) + 1);
        return scripted.step(request);
      },
    });
    const runIds: string[] = [];
    for (let i = 0; i < tasks; i++) {
      const runId = await rt.runs.runTask('worker', `t${i}`, 'say done');
      expect(
        runtimeInternals(rt).store.snapshots.has(runId),
        `run ${runId} stored when runTask resolved`,
      ).toBe(true);
      runIds.push(runId);
    }
    for (const runId of runIds) {
      const outcome = await rt.waitForRun(runId);
      expect(outcome).toMatchObject({ status: 'completed', reason: 'final_answer', text: 'done' });
    }
    const jsm = await jetstreamManager(runtimeInternals(rt).bus.nats);
    await eventually(
      async () => {
        const info = await jsm.consumers.info(AGENT_STREAM, 'agent_worker');
        return info.delivered.stream_seq >= tasks && info.num_pending + info.num_ack_pending === 0;
      },
      20_000,
      'every message delivered through JetStream and acknowledged',
    );
    expect((await jsm.streams.info(AGENT_STREAM)).state.messages).toBe(0);
    // Each run started once: one model step each.
    expect([...asked.entries()].sort()).toEqual(runIds.map((id) => [id, 1]).sort());
    for (const runId of runIds) scripted.assertConsumed('worker', runId);
    expect(
      runtimeInternals(rt)
        .store.audit.list()
        .filter((e) => e.kind === 'run_failed'),
    ).toEqual([]);
  });
});
