// A run's wait for a human is stored in the same commit as the approval it waits on: at no
// point does the store hold an approval whose run is stored before it asked (a crash there would
// bring the run back in a state that does not wait for the decision, and the decision would be
// delivered to a run not waiting for it).
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
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

describe('an approval and its run', () => {
  it('commit together: when the approval row is committed, the run is stored waiting for it', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
    });
    const call = (id: string, text: string) => ({
      respond: {
        kind: 'calls' as const,
        calls: [{ id, tool: 'send_message', args: { channel: '#ops', text } }],
      },
    });
    const scripted = new ScriptedModel({
      worker: [call('c1', 'first'), call('c2', 'second'), { respond: { kind: 'final', text: 'done' } }],
    });
    rt = await fx.start(scripted);
    const store = runtimeInternals(rt).store;
    // The approval's transaction is followed by `syncAfterCommit` (its durable point): at that
    // moment the commit is done and nothing else of the run has been written since.
    const seen: Array<{ approvalId: string; status: string | null; waitsOn: unknown }> = [];
    const syncAfterCommit = store.syncAfterCommit.bind(store);
    store.syncAfterCommit = () => {
      for (const a of store.approvals.listPending({})) {
        if (a.runId === null || seen.some((s) => s.approvalId === a.id)) continue;
        const ctx = (store.snapshots.get(a.runId)?.snapshot as { context?: { approvalId?: unknown } })
          ?.context;
        seen.push({ approvalId: a.id, status: store.snapshots.statusOf(a.runId), waitsOn: ctx?.approvalId });
      }
      return syncAfterCommit();
    };
    const runId = await rt.runs.runTask('worker', 't1', 'tell #ops twice');
    for (let i = 0; i < 2; i++) {
      const pending = await eventually(
        () => store.approvals.listPending({}).find((a) => a.runId === runId) ?? false,
        20_000,
        `approval ${i + 1} of ${runId}`,
      );
      // Unattended: the run parks on it; the decision brings it back.
      await eventually(
        () => !(rt && runtimeInternals(rt))?.runs.isLive(runId),
        20_000,
        `run parked on approval ${i + 1}`,
      );
      expect(rt.decide(pending.id, 'approved', 'tester').ok).toBe(true);
    }
    const outcome = await rt.waitForRun(runId);
    expect(outcome).toMatchObject({ status: 'completed', text: 'done' });
    expect(seen).toHaveLength(2);
    for (const s of seen)
      expect(s).toEqual({ approvalId: s.approvalId, status: 'waiting_for_approval', waitsOn: s.approvalId });
    expect(fx.sent()).toEqual(['#ops first', '#ops second']);
    scripted.assertConsumed('worker', runId);
  });

  it('the row committed with the approval is the parked run: parking writes nothing more', async () => {
    fx = runtimeFixture({
      agents: { worker: { mode: 'ask', budget: { modelCalls: 5, toolCalls: 5, wallTimeMs: 60_000 } } },
    });
    const scripted = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'hi' } }],
          },
        },
        { respond: { kind: 'final', text: 'done' } },
      ],
    });
    rt = await fx.start(scripted);
    const store = runtimeInternals(rt).store;
    let atCommit: { payload: unknown; updatedAt: number } | null = null;
    const syncAfterCommit = store.syncAfterCommit.bind(store);
    store.syncAfterCommit = () => {
      const pending = store.approvals.listPending({})[0];
      const row = pending?.runId ? store.snapshots.get(pending.runId) : null;
      if (row !== null && row !== undefined && atCommit === null)
        atCommit = { payload: JSON.stringify(row.snapshot), updatedAt: row.updatedAt };
      return syncAfterCommit();
    };
    const runId = await rt.runs.runTask('worker', 't1', 'tell #ops');
    await eventually(
      () => store.approvals.listPending({}).some((a) => a.runId === runId),
      20_000,
      'the approval',
    );
    await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 20_000, 'the run parked');
    const parked = store.snapshots.get(runId);
    expect(atCommit).not.toBeNull();
    // The same row, and not written again (a write would have moved its time).
    expect({ payload: JSON.stringify(parked?.snapshot), updatedAt: parked?.updatedAt }).toEqual(atCommit);
    // What the park would have written: the approval request done, nothing else invoked.
    const children = (parked?.snapshot as { children: Record<string, { src: string; snapshot: unknown }> })
      .children;
    expect(Object.values(children)).toEqual([
      expect.objectContaining({
        src: 'openApproval',
        snapshot: { status: 'done', output: { approvalId: store.approvals.listPending({})[0]?.id } },
      }),
    ]);
    // And the run goes on from it.
    const pending = store.approvals.listPending({})[0];
    expect(rt.decide(pending?.id ?? '', 'approved', 'tester').ok).toBe(true);
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'done' });
    expect(fx.sent()).toEqual(['#ops hi']);
  });
});
