// `audit.appendDeferred`: an event validated now and written with the connection's next
// transaction (or at the end of the turn, before a read, a sync, or close). Nothing deferred is
// ever lost or written twice, a rollback included, and the chain keeps the order of the calls.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuditKind, openStore, Redactor } from '../../store/index.ts';
import { openTemp, track } from './helpers.ts';
import { runs } from '../support/laws.ts';

const rowsOf = (path: string): number => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n;
  } finally {
    db.close();
  }
};
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const ev = (runId: string, callId: string) => ({
  kind: AuditKind.proposed,
  runId,
  callId,
  detail: { callId },
});

describe('audit.appendDeferred', () => {
  it('is readable at once, in call order with append', () => {
    const { store } = openTemp();
    store.audit.append(ev('r1', 'a'));
    store.audit.appendDeferred(ev('r1', 'b'));
    store.audit.append(ev('r2', 'c'));
    expect(store.audit.list().map((e) => e.callId)).toEqual(['a', 'b', 'c']);
    expect(store.audit.verifyChain().ok).toBe(true);
  });

  it('joins the next transaction: the events of one run and what follows them share one row', () => {
    const { store, path } = openTemp();
    store.audit.appendDeferred(ev('r1', 'a'));
    store.audit.appendDeferred(ev('r1', 'b'));
    expect(rowsOf(path)).toBe(0); // not written yet: another connection sees nothing
    store.transaction(() => store.audit.append(ev('r1', 'c')));
    expect(rowsOf(path)).toBe(1);
    expect(store.audit.list({ runId: 'r1' }).map((e) => e.callId)).toEqual(['a', 'b', 'c']);
  });

  it('is written at the end of the turn when nothing else writes', async () => {
    const { store, path } = openTemp();
    store.audit.appendDeferred(ev('r1', 'a'));
    expect(rowsOf(path)).toBe(0);
    await turn();
    expect(rowsOf(path)).toBe(1);
    expect(store.audit.list().map((e) => e.callId)).toEqual(['a']);
  });

  it('is committed before store.syncNow() and store.sync() flush', async () => {
    const { store, path } = openTemp();
    store.audit.appendDeferred(ev('r1', 'a'));
    store.syncNow();
    expect(rowsOf(path)).toBe(1);
    store.audit.appendDeferred(ev('r1', 'b'));
    await store.sync();
    expect(rowsOf(path)).toBe(2);
  });

  it('is written by close()', () => {
    const { store, path, redactor } = openTemp();
    store.audit.appendDeferred(ev('r1', 'a'));
    store.close();
    const again = track(openStore({ path, redactor }));
    expect(again.audit.list().map((e) => e.callId)).toEqual(['a']);
  });

  it('survives the rollback of the transaction it joined: written once, by the next one', () => {
    const { store } = openTemp();
    store.audit.appendDeferred(ev('r1', 'a'));
    expect(() =>
      store.transaction(() => {
        store.audit.append(ev('r1', 'x'));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    store.transaction(() => store.audit.append(ev('r1', 'c')));
    expect(store.audit.list().map((e) => e.callId)).toEqual(['a', 'c']);
    expect(store.audit.verifyChain().ok).toBe(true);
  });

  it('inside an open transaction appends at once and rolls back with it', () => {
    const { store } = openTemp();
    expect(() =>
      store.transaction(() => {
        store.audit.appendDeferred(ev('r1', 'x'));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.audit.list()).toEqual([]);
  });

  it('validates and redacts at the call: a bad event throws there and nothing is queued', async () => {
    const redactor = new Redactor();
    redactor.registerSecret('s3cr3t-value-123');
    const { store } = openTemp({ redactor });
    expect(() => store.audit.appendDeferred({ kind: 'no_such_kind' as never, runId: 'r1' })).toThrow();
    store.audit.appendDeferred({ ...ev('r1', 'a'), detail: { note: 'key s3cr3t-value-123' } });
    await turn();
    const all = store.audit.list();
    expect(all.map((e) => e.callId)).toEqual(['a']);
    expect(JSON.stringify(all)).not.toContain('s3cr3t-value-123');
  });

  it('property: any mix of appends, deferred appends, committed and rolled-back transactions and turn ends keeps exactly the kept events, in call order, on a valid chain', async () => {
    type Op =
      | { t: 'append' | 'deferred'; run: number }
      | { t: 'tx'; events: number; fail: boolean; run: number }
      | { t: 'turn' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        t: fc.constantFrom('append' as const, 'deferred' as const),
        run: fc.integer({ min: 0, max: 2 }),
      }),
      fc.record({
        t: fc.constant('tx' as const),
        events: fc.integer({ min: 0, max: 3 }),
        fail: fc.boolean(),
        run: fc.integer({ min: 0, max: 2 }),
      }),
      fc.record({ t: fc.constant('turn' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const { store } = openTemp();
        const kept: string[] = [];
        let n = 0;
        for (const o of ops) {
          if (o.t === 'turn') await turn();
          else if (o.t === 'tx') {
            const ids = Array.from({ length: o.events }, () => `e${n++}`);
            try {
              store.transaction(() => {
                for (const id of ids) store.audit.append(ev(`r${o.run}`, id));
                if (o.fail) throw new Error('rolled back');
              });
              kept.push(...ids);
            } catch (err) {
              if ((err as Error).message !== 'rolled back') throw err;
            }
          } else {
            const id = `e${n++}`;
            if (o.t === 'append') store.audit.append(ev(`r${o.run}`, id));
            else store.audit.appendDeferred(ev(`r${o.run}`, id));
            kept.push(id);
          }
        }
        expect(store.audit.list().map((e) => e.callId)).toEqual(kept);
        expect(store.audit.verifyChain()).toMatchObject({ ok: true });
        store.close();
      }),
      { numRuns: runs(60) },
    );
  });
});
