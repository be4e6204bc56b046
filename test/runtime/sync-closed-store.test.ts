import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop().catch(() => {});
  fx?.cleanup();
});

describe('the runtime’s periodic sync when its store is gone', () => {
  it('a store closed under a live runtime (a simulated crash) ends the sync: no timer throws into the process', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const clock = new SimulatedClock(Date.UTC(2026, 11, 6, 12));
    rt = await fx.start(new ScriptedModel({ worker: [] }), { clock });
    // The sync runs on the runtime's clock while the store is open.
    expect(() => clock.advance(3_000)).not.toThrow();
    runtimeInternals(rt).store.close();
    // It threw "The database connection is not open" out of its timer every second, an uncaught
    // exception in the runtime's process, until the process ended.
    expect(() => clock.advance(10_000)).not.toThrow();
    expect(() => clock.advance(10_000)).not.toThrow();
  });

  it('a store closed while an approval waits: its expiry timer fires on the closed store and does nothing (no uncaught error)', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } }, approvals: { ttlMs: 45_000 } });
    const clock = new SimulatedClock(Date.UTC(2026, 11, 6, 12));
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'a.txt', content: 'x' } }],
          },
        },
      ],
    });
    rt = await fx.start(model, { clock });
    const live = rt;
    const runId = await live.runs.runTask('worker', 'nightly', 'write it');
    await eventually(
      () => runtimeInternals(live).store.approvals.getByCall(`${runId}:c1`),
      10_000,
      'the approval',
    );
    runtimeInternals(live).store.close();
    // The approval's expiry timer and the sync both fire after this: each wrote to the closed
    // store out of a timer, an uncaught exception.
    expect(() => clock.advance(60_000)).not.toThrow();
    expect(() => clock.advance(60_000)).not.toThrow();
  });

  it('a store closed while a run waits on its model: the answer that comes after changes nothing and throws nowhere', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'allow' } } });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const scripted = new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'done' } }] });
    let answered = false;
    rt = await fx.start({
      step: async (req) => {
        await gate;
        const out = await scripted.step(req);
        answered = true;
        return out;
      },
    });
    const live = rt;
    const runId = await live.runs.runTask('worker', 't1', 'hello');
    expect(await runtimeInternals(live).runs.stored(runId)).toBe(true);
    runtimeInternals(live).store.close();
    // The answer moves the run on: its due snapshot write (a later turn of the event loop) and
    // its end found the store closed, out of any caller that could catch.
    open();
    await eventually(() => answered, 10_000, 'the model answered');
    await eventually(() => !runtimeInternals(live).runs.isLive(runId), 10_000, 'the run left its actor');
  });
});
