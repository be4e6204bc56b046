import { describe, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_SCHEMA_VERSION } from '../../store/index.ts';
import type { PutSnapshotInput } from '../../store/index.ts';
import { decodeText, encodeText } from '../../store/codec.ts';
import { LEGACY_ENVELOPE_TAG, SNAPSHOT_CODEC } from '../../store/snapshots/encoding.ts';
import { UNFINISHED_RUNS_SQL } from '../../store/snapshots/store.ts';
import { openTemp } from './helpers.ts';

function run(id: string, overrides: Partial<PutSnapshotInput> = {}): PutSnapshotInput {
  return {
    runId: id,
    agentId: 'assistant',
    surface: 'chat',
    status: 'running',
    snapshot: { status: 'active', value: 'idle', context: { n: 1 }, children: {} },
    ...overrides,
  };
}

describe('run snapshots', () => {
  it('upserts one row per run with the envelope fields and $schemaVersion', () => {
    const { store, clock } = openTemp();
    const first = store.snapshots.put(run('r1'));
    expect(first).toMatchObject({
      $schemaVersion: SNAPSHOT_SCHEMA_VERSION,
      runId: 'r1',
      updatedAt: clock.now,
      parentRunId: null,
    });
    clock.advance(100);
    store.snapshots.put(
      run('r1', { status: 'waiting_for_approval', snapshot: { status: 'active', value: 'parked' } }),
    );
    expect(store.snapshots.get('r1')).toMatchObject({
      status: 'waiting_for_approval',
      updatedAt: clock.now,
      snapshot: { value: 'parked' },
    });
    expect(store.snapshots.list()).toHaveLength(1);
    expect(store.snapshots.statusOf('r1')).toBe('waiting_for_approval');
    expect(store.snapshots.statusOf('r2')).toBeNull();
    // Stored: the columns, and only the actor snapshot as compressed JSON (no envelope field repeated).
    const row = store.connection.prepare('SELECT * FROM run_snapshots').get() as Record<string, unknown>;
    expect(row).toMatchObject({ run_id: 'r1', status: 'waiting_for_approval', schema_version: 1 });
    expect(row.payload).toBeInstanceOf(Buffer);
    expect((row.payload as Buffer)[0]).toBe(SNAPSHOT_CODEC.tag);
    expect(JSON.parse(decodeText(SNAPSHOT_CODEC, row.payload as Buffer))).toEqual({
      status: 'active',
      value: 'parked',
    });
  });

  it('lists by status and agent and removes finished runs', () => {
    const { store, clock } = openTemp();
    store.snapshots.putMany([
      run('r1'),
      run('r2', { status: 'waiting_for_approval', agentId: 'reporter', updatedAt: clock.now + 5 }),
      run('r3', { status: 'waiting_for_approval', parentRunId: 'r1', updatedAt: clock.now + 9 }),
    ]);
    expect(store.snapshots.list({ status: 'waiting_for_approval' }).map((r) => r.runId)).toEqual([
      'r2',
      'r3',
    ]);
    expect(store.snapshots.list({ agentId: 'reporter' }).map((r) => r.runId)).toEqual(['r2']);
    expect(store.snapshots.list({ status: 'waiting_for_approval', agentId: 'assistant' })).toEqual([
      {
        runId: 'r3',
        agentId: 'assistant',
        surface: 'chat',
        status: 'waiting_for_approval',
        parentRunId: 'r1',
        updatedAt: clock.now + 9,
        schemaVersion: 1,
      },
    ]);
    expect(store.snapshots.remove('r1')).toBe(true);
    expect(store.snapshots.remove('r1')).toBe(false);
    expect(store.snapshots.get('r1')).toBeNull();
  });

  it('redacts the actor snapshot before writing', () => {
    const { store, redactor } = openTemp();
    redactor.registerSecret('ghp_snapshotSecret123');
    const stored = store.snapshots.put(
      run('r1', {
        snapshot: { context: { apiKey: 'k', note: 'uses ghp_snapshotSecret123', usage: { totalTokens: 7 } } },
      }),
    );
    expect(stored.snapshot).toEqual({
      context: { apiKey: '[REDACTED]', note: 'uses [REDACTED]', usage: { totalTokens: 7 } },
    });
    expect(JSON.stringify(store.snapshots.get('r1'))).not.toContain('ghp_snapshotSecret123');
  });

  it('refuses forbidden keys and bad fields before any write, for the whole batch', () => {
    const { store } = openTemp();
    const poisoned = run('r2', { snapshot: JSON.parse('{"context":{"__proto__":{"x":1}}}') as object });
    expect(() => store.snapshots.putMany([run('r1'), poisoned])).toThrow(
      expect.objectContaining({
        code: 'forbidden_key',
        message: expect.stringContaining('$.snapshot.context.__proto__'),
      }),
    );
    expect(() => store.snapshots.put(run('r3', { snapshot: [1, 2] }))).toThrow(
      expect.objectContaining({ code: 'snapshot_malformed' }),
    );
    expect(() => store.snapshots.put(run('r4', { status: 'paused' as 'running' }))).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
    expect(store.snapshots.list()).toEqual([]);
  });

  it('refuses a snapshot over the size limit', () => {
    const { store } = openTemp();
    const big = 'x'.repeat(MAX_SNAPSHOT_BYTES);
    expect(() => store.snapshots.put(run('r1', { snapshot: { big } }))).toThrow(
      expect.objectContaining({ code: 'snapshot_too_large' }),
    );
    expect(store.snapshots.list()).toEqual([]);
  });

  it('refuses to restore a row altered on disk', () => {
    const { store } = openTemp();
    store.snapshots.put(run('r1'));
    const set = store.connection.prepare('UPDATE run_snapshots SET payload = ? WHERE run_id = ?');
    // A legacy envelope blob (kept by migration 8) is validated as before.
    set.run(
      Buffer.concat([
        Buffer.of(LEGACY_ENVELOPE_TAG),
        Buffer.from(JSON.stringify({ $schemaVersion: 7, runId: 'r1' })),
      ]),
      'r1',
    );
    expect(() => store.snapshots.get('r1')).toThrow(
      expect.objectContaining({
        code: 'snapshot_version_future',
        message: expect.stringContaining('run_snapshots[r1]'),
      }),
    );
    // A compact payload is validated with the row's columns: a forbidden key, a bad status.
    set.run(encodeText(SNAPSHOT_CODEC, '{"context":{"__proto__":{"admin":true}}}'), 'r1');
    expect(() => store.snapshots.get('r1')).toThrow(expect.objectContaining({ code: 'forbidden_key' }));
    set.run(encodeText(SNAPSHOT_CODEC, '{"value":"idle"}'), 'r1');
    store.connection.prepare("UPDATE run_snapshots SET status = 'root' WHERE run_id = 'r1'").run();
    expect(() => store.snapshots.get('r1')).toThrow(expect.objectContaining({ code: 'snapshot_malformed' }));
  });

  it('names the run of a garbled payload instead of crashing, whatever is wrong with it', () => {
    const { store } = openTemp();
    store.snapshots.put(run('r1', { status: 'completed' }));
    const good = store.connection.prepare('SELECT payload FROM run_snapshots').pluck().get() as Buffer;
    expect(good[0]).toBe(SNAPSHOT_CODEC.tag);
    const flipped = Buffer.from(good);
    const middle = Math.floor(flipped.length / 2);
    flipped[middle] = (flipped[middle] as number) ^ 0xff;
    // A stream that inflates to more than the size limit (a decompression bomb).
    const bomb = encodeText(
      { ...SNAPSHOT_CODEC, maxBytes: MAX_SNAPSHOT_BYTES + 2 },
      ' '.repeat(MAX_SNAPSHOT_BYTES + 1),
    );
    const cases: Array<[string, Buffer, RegExp]> = [
      ['empty', Buffer.alloc(0), /blob is empty/],
      ['unknown tag', Buffer.of(0x7f, 1, 2, 3), /unknown encoding tag 0x7f/],
      ['truncated', good.subarray(0, good.length - 3), /does not inflate|not valid JSON/],
      ['one byte flipped', flipped, /does not inflate|not valid JSON|not UTF-8/],
      ['not JSON', encodeText(SNAPSHOT_CODEC, '{"value":'), /not valid JSON/],
      ['not UTF-8', Buffer.concat([Buffer.of(0), Buffer.of(0xc3, 0x28)]), /not UTF-8/],
      ['bomb', bomb, /inflates to more than 16777216 bytes/],
      ['not an object', encodeText(SNAPSHOT_CODEC, '[1,2]'), /does not match version 1/],
    ];
    const set = store.connection.prepare("UPDATE run_snapshots SET payload = ? WHERE run_id = 'r1'");
    for (const [name, payload, problem] of cases) {
      set.run(payload);
      let caught: unknown;
      try {
        store.snapshots.get('r1');
      } catch (error) {
        caught = error;
      }
      expect(caught, name).toMatchObject({
        code: 'snapshot_malformed',
        message: expect.stringMatching(problem),
      });
      expect((caught as Error).message, name).toContain('run_snapshots[r1]');
      // Listing and existence do not decode: the other runs stay usable.
      expect(store.snapshots.has('r1'), name).toBe(true);
      expect(
        store.snapshots.list().map((r) => r.runId),
        name,
      ).toEqual(['r1']);
    }
  });

  it('a rewrite with the same actor snapshot stores the same bytes (reused, not recompressed) and the new columns', () => {
    const { store, clock } = openTemp();
    const payload = (): Buffer =>
      store.connection.prepare('SELECT payload FROM run_snapshots').pluck().get() as Buffer;
    store.snapshots.put(run('r1'));
    const first = payload();
    clock.advance(5);
    store.snapshots.put(run('r1', { status: 'waiting_for_approval' }));
    expect(payload().equals(first)).toBe(true);
    expect(payload().equals(encodeText(SNAPSHOT_CODEC, JSON.stringify(run('r1').snapshot)))).toBe(true);
    expect(store.snapshots.get('r1')).toMatchObject({ status: 'waiting_for_approval', updatedAt: clock.now });
    store.snapshots.put(run('r1', { snapshot: { value: 'other' } }));
    expect(store.snapshots.get('r1')?.snapshot).toEqual({ value: 'other' });
    store.snapshots.remove('r1');
    store.snapshots.put(run('r1'));
    expect(payload().equals(first)).toBe(true);
  });

  it('a put unchanged but for its time writes nothing and keeps the stored time; a rollback makes the next one write', () => {
    const { store, clock } = openTemp();
    const changes = (): number => store.connection.prepare('SELECT total_changes()').pluck().get() as number;
    const t0 = clock.now;
    store.snapshots.put(run('r1'));
    clock.advance(10);
    const before = changes();
    expect(store.snapshots.put(run('r1')).updatedAt).toBe(t0);
    expect(changes()).toBe(before);
    expect(store.snapshots.unchangedSkipped).toBe(1);
    expect(store.snapshots.get('r1')?.updatedAt).toBe(t0);
    // Any change of a column is written: the status alone, and a time the caller gives.
    store.snapshots.put(run('r1', { status: 'waiting_for_approval' }));
    expect(store.snapshots.get('r1')).toMatchObject({ status: 'waiting_for_approval', updatedAt: clock.now });
    store.snapshots.put(run('r1', { status: 'waiting_for_approval', updatedAt: clock.now + 7 }));
    expect(store.snapshots.get('r1')?.updatedAt).toBe(clock.now + 7);
    // Written inside a transaction that rolls back: the row is not there, so the same put writes it.
    clock.advance(10);
    expect(() =>
      store.transaction(() => {
        store.snapshots.put(run('r1', { status: 'running', snapshot: { value: 'lost' } }));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.snapshots.get('r1')?.status).toBe('waiting_for_approval');
    store.snapshots.put(run('r1', { status: 'running', snapshot: { value: 'lost' } }));
    expect(store.snapshots.get('r1')).toMatchObject({ status: 'running', snapshot: { value: 'lost' } });
    // A removal forgets the row: the same put writes it again.
    store.snapshots.remove('r1');
    store.snapshots.put(run('r1', { status: 'running', snapshot: { value: 'lost' } }));
    expect(store.snapshots.has('r1')).toBe(true);
  });

  it('a put with the token of the last committed write is skipped unprepared, unless the redactor learnt more or it rolled back', () => {
    const { store, clock, redactor } = openTemp();
    const changes = (): number => store.connection.prepare('SELECT total_changes()').pluck().get() as number;
    const stored = (): string =>
      decodeText(
        SNAPSHOT_CODEC,
        store.connection.prepare('SELECT payload FROM run_snapshots').pluck().get() as Buffer,
      );
    const a = { step: 1 };
    const b = { child: 1 };
    const input = run('r1', { snapshot: { value: 'x', note: 'deploy key hunter2-abcdef' } });
    const t0 = clock.now;
    store.snapshots.put(input, [a, b]);
    const skipped = store.snapshots.unchangedSkipped;
    clock.advance(10);
    const before = changes();
    // The same objects: nothing prepared, so even an input that would be refused is not looked at.
    const refused = run('r1', { snapshot: { constructor: 1 } });
    expect(store.snapshots.put(refused, [a, b]).updatedAt).toBe(t0);
    expect(store.snapshots.unchangedSkipped).toBe(skipped + 1);
    expect(changes()).toBe(before);
    // Other objects (or the same in another order, or fewer) are prepared: the refusal shows.
    expect(() => store.snapshots.put(refused, [b, a])).toThrow(/forbidden key/);
    expect(() => store.snapshots.put(refused, [a])).toThrow(/forbidden key/);
    expect(() => store.snapshots.put(refused)).toThrow(/forbidden key/);
    // A secret registered since: the same token is prepared again and the row rewritten without it.
    expect(stored()).toContain('hunter2-abcdef');
    redactor.registerSecret('hunter2-abcdef');
    store.snapshots.put(input, [a, b]);
    expect(stored()).not.toContain('hunter2-abcdef');
    expect(changes()).toBe(before + 1);
    // A write rolled back: the token is forgotten, so the same put writes the row again.
    const c = { step: 2 };
    const moved = run('r1', { status: 'waiting_for_approval', snapshot: { value: 'y' } });
    expect(() =>
      store.transaction(() => {
        store.snapshots.put(moved, [c]);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.snapshots.get('r1')?.status).toBe('running');
    store.snapshots.put(moved, [c]);
    expect(store.snapshots.get('r1')).toMatchObject({
      status: 'waiting_for_approval',
      snapshot: { value: 'y' },
    });
    // A put of several inputs remembers no token.
    const d = { step: 3 };
    store.snapshots.putMany([run('r1', { snapshot: { value: 'z' } }), run('r2')], [d]);
    expect(() => store.snapshots.put(run('r1', { snapshot: { prototype: 1 } }), [d])).toThrow(
      /forbidden key/,
    );
  });

  it('lists the unfinished runs, and the runs of an unfinished status, by their own index without reading the finished ones', () => {
    const { store, clock } = openTemp();
    const statuses = [
      'completed',
      'running',
      'failed',
      'waiting_for_approval',
      'denied',
      'resuming',
    ] as const;
    for (let i = 0; i < 60; i++) {
      clock.advance(1);
      const status = statuses[i % statuses.length] ?? 'running';
      store.snapshots.put(run(`r${i}`, { status, agentId: i % 4 === 0 ? 'other' : 'assistant' }));
    }
    clock.advance(1);
    // A run that moved on: listed once, by its latest status and time.
    store.snapshots.put(run('r0', { status: 'running' }));
    const all = store.snapshots.list();
    const open = (s: string) => s === 'running' || s === 'waiting_for_approval' || s === 'resuming';
    expect(store.snapshots.listUnfinished()).toEqual(all.filter((r) => open(r.status)));
    expect(store.snapshots.listUnfinished().map((r) => r.runId)).toContain('r0');
    expect(store.snapshots.listUnfinished()).toHaveLength(31);
    for (const status of statuses) {
      expect(store.snapshots.list({ status })).toEqual(all.filter((r) => r.status === status));
      expect(store.snapshots.list({ status, agentId: 'other' })).toEqual(
        all.filter((r) => r.status === status && r.agentId === 'other'),
      );
    }
    const plan = (sql: string, ...args: unknown[]): string =>
      (store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('; ');
    // The unfinished runs' own index, in its order: no finished row read, nothing sorted but ties.
    expect(plan(UNFINISHED_RUNS_SQL)).toMatch(
      /^SCAN run_snapshots USING INDEX run_snapshots_unfinished(;|$)/,
    );
    expect(plan(UNFINISHED_RUNS_SQL)).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
  });

  it('every query of the table uses an index or is a listing (EXPLAIN QUERY PLAN)', () => {
    const { store } = openTemp();
    const plan = (sql: string): string =>
      (store.connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('r1') as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('; ');
    expect(plan('SELECT * FROM run_snapshots WHERE run_id = ?')).toMatch(
      /SEARCH run_snapshots USING INDEX sqlite_autoindex_run_snapshots_1 \(run_id=\?\)/,
    );
    expect(plan('DELETE FROM run_snapshots WHERE run_id = ?')).toMatch(
      /SEARCH run_snapshots USING INDEX sqlite_autoindex_run_snapshots_1 \(run_id=\?\)/,
    );
    expect(
      plan(`SELECT 1 FROM schedule_firings f WHERE f.status = 'started'
            AND NOT EXISTS (SELECT 1 FROM run_snapshots s WHERE s.run_id = f.run_id) AND f.task_id = ?`),
    ).toMatch(/SEARCH s USING (COVERING )?INDEX sqlite_autoindex_run_snapshots_1/);
  });
});
