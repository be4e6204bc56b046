// `store.joinEachCommit`: a part's held-back write joins whichever transaction the store opens
// next. Law (fast-check over transactions that commit, roll back, roll back a savepoint, single
// operations and transactions opened on the raw connection): what a second connection reads is
// exactly what the part was told is committed; a value due before a committing transaction is
// committed by it; a rollback never counts as committed and leaves the value due again; a
// transaction the store did not open never carries it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openStore, Redactor } from '../../store/index.ts';
import { openTemp } from './helpers.ts';
import { runs } from '../support/laws.ts';

type Op = 'due' | 'commit' | 'rollback' | 'savepointRollback' | 'single' | 'raw';

const snapshot = (value: string) => ({ status: 'active', value, context: {}, children: {} });

describe('store.joinEachCommit', () => {
  it('a due write commits with the next transaction the store opens, and only then counts as committed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Op>('due', 'commit', 'rollback', 'savepointRollback', 'single', 'raw'), {
          minLength: 1,
          maxLength: 30,
        }),
        (ops) => {
          const { store, path } = openTemp();
          const reader = openStore({ path, redactor: new Redactor(), readonly: true });
          let next = 0;
          let due: string | null = null;
          let inTx: string | null = null;
          let committed: string | null = null;
          store.joinEachCommit({
            write: () => {
              if (due === null) return;
              const value = due;
              due = null;
              store.snapshots.put({
                runId: 'held',
                agentId: 'a',
                surface: 'chat',
                status: 'running',
                snapshot: snapshot(value),
              });
              inTx = value;
            },
            undone: () => {
              if (inTx !== null) due ??= inTx;
              inTx = null;
            },
            ended: (ok) => {
              if (ok && inTx !== null) committed = inTx;
              inTx = null;
            },
          });
          const other = (id: string) =>
            store.snapshots.put({
              runId: id,
              agentId: 'a',
              surface: 'chat',
              status: 'running',
              snapshot: snapshot(id),
            });
          const fail = () => {
            throw new Error('rolled back');
          };
          try {
            for (const op of ops) {
              const before = due;
              if (op === 'due') due = `v${next++}`;
              else if (op === 'commit') store.transaction(() => other(`c${next++}`));
              else if (op === 'single') other(`s${next++}`);
              else if (op === 'rollback')
                expect(() =>
                  store.transaction(() => {
                    other(`r${next++}`);
                    fail();
                  }),
                ).toThrow('rolled back');
              else if (op === 'savepointRollback')
                store.transaction(() => {
                  expect(() =>
                    store.transaction(() => {
                      other(`p${next++}`);
                      fail();
                    }),
                  ).toThrow('rolled back');
                });
              else {
                store.connection.exec('BEGIN');
                other(`x${next++}`);
                store.connection.exec('COMMIT');
              }
              // What another connection reads is what the part was told.
              const stored = reader.snapshots.get('held')?.snapshot as { value?: string } | undefined;
              expect(stored?.value ?? null).toBe(committed);
              expect(inTx).toBeNull();
              if (op === 'commit' || op === 'single' || op === 'savepointRollback') {
                // Whatever was due rode with it.
                expect(due).toBeNull();
                if (before !== null) expect(committed).toBe(before);
              }
              // A rollback, or a transaction the store did not open, leaves it due.
              if (op === 'rollback' || op === 'raw') expect(due).toBe(before);
            }
          } finally {
            reader.close();
            store.close();
          }
        },
      ),
      { numRuns: runs(150) },
    );
  });
});
