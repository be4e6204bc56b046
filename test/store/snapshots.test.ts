import { describe, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES, SNAPSHOT_SCHEMA_VERSION } from '../../store/index.ts';
import type { PutSnapshotInput } from '../../store/index.ts';
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
    const payload = store.connection.prepare('SELECT payload FROM run_snapshots').pluck().get() as string;
    expect(JSON.parse(payload)).toMatchObject({ $schemaVersion: SNAPSHOT_SCHEMA_VERSION });
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
    store.connection
      .prepare('UPDATE run_snapshots SET payload = ? WHERE run_id = ?')
      .run(JSON.stringify({ $schemaVersion: 7, runId: 'r1' }), 'r1');
    expect(() => store.snapshots.get('r1')).toThrow(
      expect.objectContaining({
        code: 'snapshot_version_future',
        message: expect.stringContaining('run_snapshots[r1]'),
      }),
    );
  });
});
