// A started runtime stops in one order, the reverse of how it was built: no new work first (goals,
// the scheduler and the sync timer, the control socket, the agents and their queue), then the live runs parked, then what
// they used (approvals, tools, the bus), the store last.
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

describe('the stop order of a started runtime', () => {
  it('is the reverse of the build order, and stop runs it to the end', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    rt = await fx.start(new ScriptedModel({ worker: [] }));
    const internals = runtimeInternals(rt);
    const order = internals.lifecycle.order();
    const at = (name: string): number => {
      const i = order.indexOf(name);
      expect(i, `${name} in ${order.join(', ')}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    // No new work before the runs are parked; the runs parked before what they use closes.
    for (const first of ['goals', 'scheduler', 'sync timer', 'control socket', 'agents'])
      expect(at(first)).toBeLessThan(at('runs'));
    for (const after of ['approvals', 'agent buses', 'bus', 'runtime file', 'store'])
      expect(at(after)).toBeGreaterThan(at('runs'));
    expect(at('runtime file')).toBeLessThan(at('store'));
    expect(order[order.length - 1]).toBe('store');
    expect(new Set(order).size).toBe(order.length);
    const stopping = rt.stop();
    expect(internals.lifecycle.stopped).toBe(true);
    await stopping;
    expect(internals.lifecycle.order()).toEqual([]);
    // A second stop waits for the same stop and does not run anything again.
    await rt.stop();
    rt = null;
  });
});
