// A run stored by an older version in the state that invoked an effect, with that effect already
// done (the crash suite found such rows: a write joined a transaction inside the run's own
// transition). Restored, XState neither restarts a settled effect nor sends its completion again;
// the run must go on from the stored result instead of waiting for it until its deadline.
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { join } from 'node:path';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | undefined;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

const RUN = 'worker:old-row';
const call = { id: 'c2', tool: 'send_message', args: { channel: '#c2', text: 'x' } };
const allow = {
  decision: 'allow',
  reason: 'mode_allow',
  risk: 'external',
  rule: { id: 'mode.allow', source: 'mode' },
  targets: [{ argument: 'channel', input: '#c2', resolved: null, root: null, access: null }],
  humanRequired: false,
  step: 5,
};

/** The row such a version wrote: deciding on c2, its policy decision done and not yet heard. */
function oldRow(now: number) {
  return {
    status: 'active',
    value: { running: { acting: 'deciding' } },
    historyValue: {},
    context: {
      runId: RUN,
      agentId: 'worker',
      sessionId: 'task:old',
      taskId: 'old',
      parentRunId: null,
      surface: 'scheduled',
      interaction: 'unattended',
      message: 'send it',
      budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 120_000 },
      startedAt: now,
      transcript: [
        { role: 'user', text: 'send it' },
        { role: 'assistant', calls: [call] },
      ],
      calls: [call],
      cursor: 0,
      decision: null,
      approvalId: null,
      used: { modelCalls: 1, toolCalls: 0 },
      steps: 1,
      denials: {},
      outcome: null,
    },
    children: {
      '0.run.running.acting.deciding': {
        snapshot: { status: 'done', output: allow },
        src: 'decide',
        syncSnapshot: false,
      },
    },
  };
}

describe('a restored run whose stored effect already finished', () => {
  it(
    'goes on from the stored result: the decided call runs once and the run completes',
    { timeout: 60_000 },
    async () => {
      fx = runtimeFixture({
        agents: { worker: { mode: 'allow', budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 120_000 } } },
      });
      // The state dir as that version left it: the runtime ran once (schema, stream), then the row.
      const first = await fx.start(new ScriptedModel({ worker: [] }));
      await first.stop();
      const store = openStore({ path: join(fx.stateDir, 'snotra.db'), redactor: new Redactor() });
      try {
        store.snapshots.put({
          runId: RUN,
          agentId: 'worker',
          surface: 'scheduled',
          status: 'running',
          parentRunId: null,
          snapshot: oldRow(Date.now()),
        });
      } finally {
        store.close();
      }
      // Step 0 (the answer proposing c2) was asked before the row was written; only step 1 is asked now.
      const scripted = new ScriptedModel({
        worker: [{ respond: { kind: 'calls', calls: [call] } }, { respond: { kind: 'final', text: 'sent' } }],
      });
      const asked: number[] = [];
      rt = await fx.start({
        step: (req) => {
          asked.push(req.step);
          return scripted.step(req);
        },
      });
      const r = rt;
      await eventually(
        () => runtimeInternals(r).store.snapshots.statusOf(RUN) === 'completed',
        20_000,
        'the old run completed',
      );
      expect(fx.sent()).toEqual(['#c2 x']);
      expect(runtimeInternals(r).store.ledger.lookup(`call:${RUN}:c2`)?.status).toBe('completed');
      // Decided once, from the stored decision: the policy was not asked again.
      const kinds = runtimeInternals(r)
        .store.audit.list({ runId: RUN })
        .map((e) => e.kind);
      expect(kinds.filter((k) => k === 'policy_decided')).toHaveLength(1);
      expect(kinds).toContain('started');
      expect(asked).toEqual([1]);
    },
  );
});
