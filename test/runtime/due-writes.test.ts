// A run's snapshot writes that are due (its first state, a model answer, a step) join the next
// transaction the store opens, or the end of the turn. Here: a started run is stored once its
// start resolves, and a due write that joined a transaction which then rolled back is written
// again on its own — the run is never left unstored while it waits on its model.
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider } from '../../actors/model/provider.ts';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
let open: () => void = () => {};
afterEach(async () => {
  open();
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

/** The scripted model, whose first answer waits until `open` is called. */
function gated(scripted: ScriptedModel): ModelProvider {
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    step: async (req) => {
      await gate;
      return scripted.step(req);
    },
  };
}

async function start() {
  fx = runtimeFixture({ agents: { worker: { mode: 'allow' } } });
  const scripted = new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'done' } }] });
  rt = await fx.start(gated(scripted));
  return rt;
}

describe('due snapshot writes', () => {
  it('a started run is in the store once runTask resolves, while its model has not answered', async () => {
    const rt = await start();
    const runId = await rt.runs.runTask('worker', 't1', 'hello');
    expect(runtimeInternals(rt).store.snapshots.statusOf(runId)).toBe('running');
    expect(await runtimeInternals(rt).runs.stored(runId)).toBe(true);
    open();
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'done' });
  });

  it('a first state written in a transaction that rolled back is written again, not lost', async () => {
    const rt = await start();
    const rolledBack: string[] = [];
    // As the run starts (its first state due), another part of the runtime opens a transaction
    // that writes (a savepoint: the due state joins it) and then fails.
    const off = rt.runs.onRunEvent((e) => {
      if (e.type !== 'run.started') return;
      queueMicrotask(() => {
        try {
          runtimeInternals(rt).store.transaction(() => {
            runtimeInternals(rt).store.snapshots.put({
              runId: 'other-run',
              agentId: 'worker',
              surface: 'chat',
              status: 'running',
              snapshot: { status: 'active', value: 'x', context: {}, children: {} },
            });
            rolledBack.push(runtimeInternals(rt).store.snapshots.statusOf(e.runId) ?? 'absent');
            throw new Error('this transaction fails');
          });
        } catch {
          // Expected: rolled back whole.
        }
      });
    });
    const runId = await rt.runs.runTask('worker', 't1', 'hello');
    off();
    // The due state had joined the failed transaction (seen inside it), and was rolled back with it.
    expect(rolledBack).toEqual(['running']);
    expect(runtimeInternals(rt).store.snapshots.has('other-run')).toBe(false);
    // Written again on its own: the run is stored while its model is still held.
    expect(await runtimeInternals(rt).runs.stored(runId)).toBe(true);
    await eventually(
      () => runtimeInternals(rt).store.snapshots.statusOf(runId) === 'running',
      20_000,
      'the run stored',
    );
    open();
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed', text: 'done' });
  });
});
