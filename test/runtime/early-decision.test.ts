// A decision can reach an approval before its request is reported: the row is committed (a
// surface reading the Inbox sees it) while the request is still being made durable. The run must
// not go on, and nobody must hear of the decision, before the request itself is reported: every
// listener (a platform chat's notice, the bus) gets `approval.requested` first, then
// `approval.resolved`, once each, and the approved call runs once.
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

describe('a decision made before its request is reported', () => {
  it.each(['approved', 'denied'] as const)(
    '(%s) reaches the run and the listeners only after the request',
    async (decision) => {
      fx = runtimeFixture({
        agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
      });
      const scripted = new ScriptedModel({
        worker: [
          {
            respond: {
              kind: 'calls',
              calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'hello' } }],
            },
          },
          // A denial without a reason ends the run `denied`: the model is not asked again.
          ...(decision === 'approved' ? [{ respond: { kind: 'final' as const, text: 'done' } }] : []),
        ],
      });
      rt = await fx.start(scripted);
      const events: string[] = [];
      rt.runs.onRunEvent((e) => {
        if (e.type === 'approval.requested' || e.type === 'approval.resolved' || e.type === 'run.parked')
          events.push(e.type);
      });
      const runtime = rt;
      const store = runtimeInternals(rt).store;
      // Right after the request's row commits, before its durable point: a human decides (as a
      // surface that listed the Inbox at that moment would).
      const syncAfterCommit = store.syncAfterCommit.bind(store);
      let decided: { ok: boolean } | null = null;
      store.syncAfterCommit = () => {
        const pending = store.approvals.listPending({});
        if (decided === null && pending.length === 1 && pending[0] !== undefined) {
          decided = runtime.decide(pending[0].id, decision, 'tester');
          events.push('decided');
        }
        return syncAfterCommit();
      };
      const runId = await rt.runs.runTask('worker', 't1', 'say hello on #ops');
      const outcome = await rt.waitForRun(runId);
      expect(decided).toMatchObject({ ok: true });
      expect(outcome).toMatchObject(
        decision === 'approved' ? { status: 'completed', text: 'done' } : { status: 'denied' },
      );
      // Reported in order, once each; the run never parked (it was decided before it could).
      expect(events).toEqual(['decided', 'approval.requested', 'approval.resolved']);
      expect(fx.sent()).toEqual(decision === 'approved' ? ['#ops hello'] : []);
      expect(store.approvals.listPending({})).toEqual([]);
      scripted.assertConsumed('worker', runId);
    },
  );
});
