import { describe, expect, it } from 'vitest';
import { InFlight } from '../../surfaces/platforms/in-flight.ts';

describe('a bound on requests in flight', () => {
  it('gives at most `limit` permits at once, the rest in arrival order as permits come back', async () => {
    const bound = new InFlight(2);
    const signal = new AbortController().signal;
    const order: number[] = [];
    expect(await bound.acquire(signal)).toBe(true);
    expect(await bound.acquire(signal)).toBe(true);
    const waiting = [3, 4, 5].map((n) => bound.acquire(signal).then((ok) => ok && order.push(n)));
    await Promise.resolve();
    expect(bound.used).toBe(2);
    expect(order).toEqual([]);
    bound.release();
    await waiting[0];
    expect(order).toEqual([3]);
    expect(bound.used).toBe(2);
    bound.release();
    bound.release();
    await Promise.all(waiting);
    expect(order).toEqual([3, 4, 5]);
    expect(bound.used).toBe(2);
  });

  it('a wait cut by its signal holds no permit and is skipped; a bad limit is refused by name', async () => {
    const bound = new InFlight(1);
    expect(await bound.acquire(new AbortController().signal)).toBe(true);
    const stop = new AbortController();
    const cut = bound.acquire(stop.signal);
    const next = bound.acquire(new AbortController().signal);
    stop.abort();
    expect(await cut).toBe(false);
    bound.release();
    expect(await next).toBe(true);
    expect(bound.used).toBe(1);
    const aborted = new AbortController();
    aborted.abort();
    expect(await new InFlight(3).acquire(aborted.signal)).toBe(false);
    expect(() => new InFlight(0)).toThrow(/in-flight limit must be ≥ 1, got 0/);
  });
});
