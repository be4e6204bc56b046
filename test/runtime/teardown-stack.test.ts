// The runtime's one teardown stack (runtime/boot/shutdown.ts): boot pushes each part's teardown as
// the part is built; a failed boot and a normal stop run it the same way, last built first.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Lifecycle, shutdown } from '../../runtime/boot/shutdown.ts';
import { runs } from '../support/laws.ts';

describe('the teardown stack', () => {
  it('runs every pushed step once, last pushed first, for any number of steps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 20 }), async (n) => {
        const life = new Lifecycle();
        const ran: number[] = [];
        for (let i = 0; i < n; i++) life.onStop(`part ${i}`, () => void ran.push(i));
        expect(life.order()).toEqual(Array.from({ length: n }, (_, i) => `part ${n - 1 - i}`));
        await shutdown(life);
        await shutdown(life);
        expect(ran).toEqual(Array.from({ length: n }, (_, i) => n - 1 - i));
      }),
      { numRuns: runs(100) },
    );
  });

  it('marks the runtime stopping and aborts its work before the first step runs', async () => {
    const life = new Lifecycle();
    const seen: Array<[boolean, boolean]> = [];
    life.onStop('part', () => void seen.push([life.stopped, life.abort.signal.aborted]));
    expect([life.stopped, life.abort.signal.aborted]).toEqual([false, false]);
    await shutdown(life);
    expect(seen).toEqual([[true, true]]);
  });

  it('waits for an async step before the next one', async () => {
    const life = new Lifecycle();
    const ran: string[] = [];
    life.onStop('store', () => void ran.push('store'));
    life.onStop('bus', async () => {
      await new Promise((r) => setImmediate(r));
      ran.push('bus');
    });
    await shutdown(life);
    expect(ran).toEqual(['bus', 'store']);
  });

  it('a failing step does not keep the others from running; the first failure is rethrown', async () => {
    const life = new Lifecycle();
    const ran: string[] = [];
    life.onStop('store', () => void ran.push('store'));
    life.onStop('tools', () => {
      throw new Error('tools would not close');
    });
    life.onStop('bus', async () => {
      ran.push('bus');
      throw new Error('bus would not close');
    });
    await expect(shutdown(life)).rejects.toThrow('bus would not close');
    expect(ran).toEqual(['bus', 'store']);
    // The stack is spent: a second stop runs nothing and does not throw.
    await expect(shutdown(life)).resolves.toBeUndefined();
  });
});
