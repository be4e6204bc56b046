import { describe, expect, it } from 'vitest';
import { clockFromNow, systemClock, toClock } from '../../runtime/time/clock.ts';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

describe('SimulatedClock', () => {
  it('stands still until advanced, then fires due timers in due-time order with now at each due time', () => {
    const clock = new SimulatedClock(T0);
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => seen.push(['c', clock.now()]), 300);
    clock.setTimeout(() => seen.push(['a', clock.now()]), 100);
    clock.setTimeout(() => seen.push(['b', clock.now()]), 200);
    clock.setTimeout(() => seen.push(['late', clock.now()]), 1000);
    expect(clock.pending).toBe(4);
    expect(seen).toEqual([]);
    clock.advance(250);
    expect(seen).toEqual([
      ['a', T0 + 100],
      ['b', T0 + 200],
    ]);
    expect(clock.now()).toBe(T0 + 250);
    clock.advance(50);
    expect(seen.at(-1)).toEqual(['c', T0 + 300]);
    expect(clock.pending).toBe(1);
  });

  it('timers due at the same time fire in the order they were armed', () => {
    const clock = new SimulatedClock(T0);
    const seen: number[] = [];
    for (const i of [0, 1, 2, 3]) clock.setTimeout(() => seen.push(i), 50);
    clock.setTimeout(() => seen.push(-1), 0);
    clock.advance(50);
    expect(seen).toEqual([-1, 0, 1, 2, 3]);
  });

  it('a timer armed by a callback during an advance fires in the same advance when due before its end', () => {
    const clock = new SimulatedClock(T0);
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => {
      seen.push(['outer', clock.now()]);
      clock.setTimeout(() => seen.push(['inner', clock.now()]), 30);
      clock.setTimeout(() => seen.push(['beyond', clock.now()]), 500);
    }, 100);
    clock.setTimeout(() => seen.push(['between', clock.now()]), 120);
    clock.advance(200);
    expect(seen).toEqual([
      ['outer', T0 + 100],
      ['between', T0 + 120],
      ['inner', T0 + 130],
    ]);
    expect(clock.pending).toBe(1);
    clock.advance(400);
    expect(seen.at(-1)).toEqual(['beyond', T0 + 600]);
  });

  it('a cleared timer never fires, also when cleared by an earlier callback of the same advance', () => {
    const clock = new SimulatedClock(T0);
    const seen: string[] = [];
    const never = clock.setTimeout(() => seen.push('never'), 10);
    clock.clearTimeout(never);
    const later = clock.setTimeout(() => seen.push('later'), 20);
    clock.setTimeout(() => {
      seen.push('first');
      clock.clearTimeout(later);
    }, 15);
    clock.clearTimeout(undefined);
    clock.advance(100);
    expect(seen).toEqual(['first']);
    expect(clock.pending).toBe(0);
  });

  it('an interval fires once per period until cleared, interleaved with timeouts by due time', () => {
    const clock = new SimulatedClock(T0);
    const seen: Array<[string, number]> = [];
    const tick = clock.setInterval(() => seen.push(['tick', clock.now() - T0]), 100);
    clock.setTimeout(() => seen.push(['once', clock.now() - T0]), 150);
    clock.advance(350);
    expect(seen).toEqual([
      ['tick', 100],
      ['once', 150],
      ['tick', 200],
      ['tick', 300],
    ]);
    expect(clock.pending).toBe(1);
    clock.clearInterval(tick);
    clock.advance(1000);
    expect(seen).toHaveLength(4);
  });

  it('set moves forward like advance, and backward without firing anything', () => {
    const clock = new SimulatedClock(T0);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 1000);
    clock.set(T0 - 5000);
    expect(clock.now()).toBe(T0 - 5000);
    expect(seen).toEqual([]);
    clock.set(T0 + 2000);
    expect(seen).toEqual([T0 + 1000]);
    expect(clock.now()).toBe(T0 + 2000);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});

describe('the runtime clock option', () => {
  it('a bare now function keeps its time and gets real timers; no option is the system clock', async () => {
    const ahead = toClock(() => T0);
    expect(ahead.now()).toBe(T0);
    const fired = await new Promise<boolean>((resolve) => {
      ahead.setTimeout(() => resolve(true), 1);
      systemClock.setTimeout(() => resolve(false), 1000);
    });
    expect(fired).toBe(true);
    expect(toClock(undefined)).toBe(systemClock);
    const sim = new SimulatedClock(T0);
    expect(toClock(sim)).toBe(sim);
    expect(clockFromNow(() => 7).now()).toBe(7);
  });

  it('the system clock clamps delays past what Node takes instead of firing them at once', async () => {
    let fired = false;
    const far = systemClock.setTimeout(() => (fired = true), 2 ** 40);
    await new Promise((r) => setTimeout(r, 20));
    systemClock.clearTimeout(far);
    expect(fired).toBe(false);
  });
});
