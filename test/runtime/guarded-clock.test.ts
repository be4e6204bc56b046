import { describe, expect, it } from 'vitest';
import { guardTimers } from '../../runtime/time/guarded-clock.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';

describe('guardTimers (a runtime clock’s timers never throw into the process)', () => {
  const setup = () => {
    const base = new SimulatedClock(1_000);
    let active = true;
    const errors: Array<[string, string]> = [];
    const clock = guardTimers(
      base,
      () => active,
      (err, kind) => errors.push([kind, (err as Error).message]),
    );
    return { base, clock, errors, stop: () => (active = false) };
  };

  it('a throwing timeout or interval reports its error and the clock goes on', () => {
    const { base, clock, errors } = setup();
    let ticks = 0;
    clock.setTimeout(() => {
      throw new Error('boom once');
    }, 10);
    clock.setInterval(() => {
      ticks++;
      throw new Error(`tick ${ticks}`);
    }, 100);
    expect(() => base.advance(250)).not.toThrow();
    expect(errors).toEqual([
      ['timeout', 'boom once'],
      ['interval', 'tick 1'],
      ['interval', 'tick 2'],
    ]);
    expect(clock.now()).toBe(1_250);
  });

  it('once inactive, a due timeout does nothing and an interval is cleared', () => {
    const { base, clock, errors, stop } = setup();
    const calls: string[] = [];
    clock.setTimeout(() => calls.push('timeout'), 50);
    clock.setInterval(() => calls.push('interval'), 20);
    base.advance(30);
    expect(calls).toEqual(['interval']);
    stop();
    base.advance(1_000);
    expect(calls).toEqual(['interval']);
    expect(errors).toEqual([]);
  });

  it('clearTimeout and clearInterval clear what the guarded clock armed', () => {
    const { base, clock } = setup();
    const calls: string[] = [];
    const t = clock.setTimeout(() => calls.push('timeout'), 50);
    const i = clock.setInterval(() => calls.push('interval'), 20);
    clock.clearTimeout(t);
    clock.clearInterval(i);
    base.advance(200);
    expect(calls).toEqual([]);
  });
});
