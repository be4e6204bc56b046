// Every state a run is written in is one a restore can go on from. A write that joins a
// transaction can run inside the run's own transition (an audit action commits): XState's
// snapshot is then the state being left, while the child it invoked has already finished. Such a
// state, restored, waits for a completion that never comes again (the crash suite found a run that
// hung after a restart). Here every write of every run is checked: no invoked child has settled.
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture | undefined;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

interface PersistedChild {
  readonly src?: unknown;
  readonly snapshot?: { readonly status?: unknown; readonly children?: Record<string, PersistedChild> };
}

/** The invoked children of a persisted run snapshot, depth first, that are no longer active. */
function settledChildren(snapshot: unknown, path = ''): string[] {
  const children = (snapshot as { children?: Record<string, PersistedChild> }).children ?? {};
  const out: string[] = [];
  for (const [key, child] of Object.entries(children)) {
    const status = child.snapshot?.status;
    if (status !== 'active') out.push(`${path}${key} (${String(child.src)}: ${String(status)})`);
    out.push(...settledChildren(child.snapshot ?? {}, `${path}${key}/`));
  }
  return out;
}

const call = (id: string, channel: string) => ({
  respond: { kind: 'calls' as const, calls: [{ id, tool: 'send_message', args: { channel, text: id } }] },
});

describe('resumable writes', () => {
  it('no run is ever written with an invoked child that already finished (allowed, asked and denied calls)', async () => {
    fx = runtimeFixture({
      agents: {
        worker: {
          mode: 'allow',
          rules: [{ id: 'no-writes', tool: 'write_file', effect: 'deny' }],
          budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 },
        },
        asker: { mode: 'ask', budget: { modelCalls: 10, toolCalls: 10, wallTimeMs: 60_000 } },
      },
    });
    const scripted = new ScriptedModel({
      worker: [
        call('w1', '#a'),
        {
          respond: {
            kind: 'calls' as const,
            calls: [{ id: 'w2', tool: 'write_file', args: { path: 'notes.txt', content: 'x' } }],
          },
        },
        call('w3', '#b'),
        { respond: { kind: 'final', text: 'worker done' } },
      ],
      asker: [call('a1', '#ops'), call('a2', '#ops'), { respond: { kind: 'final', text: 'asker done' } }],
    });
    rt = await fx.start(scripted);
    const store = runtimeInternals(rt).store;
    const writes: Array<{ runId: string; status: string; settled: string[] }> = [];
    const put = store.snapshots.put.bind(store.snapshots);
    store.snapshots.put = (input, token) => {
      writes.push({ runId: input.runId, status: input.status, settled: settledChildren(input.snapshot) });
      return put(input, token);
    };
    const worker = await rt.runs.runTask('worker', 'tw', 'send three');
    const asker = await rt.runs.runTask('asker', 'ta', 'ask first');
    // Each approval parks the run; the decision restores it, and a restored run's audit reads
    // (does it replay a step?) commit the audit events waiting for a transaction — inside its
    // transition. The second call is proposed and decided by the restored run.
    for (const id of ['a1', 'a2']) {
      const pending = await eventually(
        () => store.approvals.listPending({}).find((a) => a.runId === asker) ?? false,
        20_000,
        `the approval of ${id}`,
      );
      await eventually(
        () => !(rt && runtimeInternals(rt))?.runs.isLive(asker),
        20_000,
        `the asker parked on ${id}`,
      );
      expect(rt.decide(pending.id, 'approved', 'tester').ok).toBe(true);
    }
    expect(await rt.waitForRun(worker)).toMatchObject({ status: 'completed', text: 'worker done' });
    expect(await rt.waitForRun(asker)).toMatchObject({ status: 'completed', text: 'asker done' });
    scripted.assertConsumed('worker', worker);
    scripted.assertConsumed('asker', asker);
    // The scenario really wrote each run many times, its answers among them.
    expect(writes.filter((w) => w.runId === worker).length).toBeGreaterThanOrEqual(3);
    expect(writes.filter((w) => w.runId === asker).length).toBeGreaterThanOrEqual(2);
    const unfinished = writes.filter((w) => w.status !== 'completed' && w.status !== 'failed');
    // One settled child is expected: a parked run's approval request, done once the approval is
    // stored. Nothing waits for it (the run waits for APPROVAL_DECIDED), and it is not run again.
    const parkedOn = '0.run.waiting_for_approval (openApproval: done)';
    expect(
      unfinished.filter((w) => w.status === 'waiting_for_approval' && w.settled.includes(parkedOn)),
    ).not.toEqual([]);
    const waitedFor = unfinished
      .map((w) => ({ ...w, settled: w.settled.filter((c) => c !== parkedOn) }))
      .filter((w) => w.settled.length > 0);
    expect(waitedFor).toEqual([]);
    expect(fx.sent().sort()).toEqual(['#a w1', '#b w3', '#ops a1', '#ops a2']);
  });
});
