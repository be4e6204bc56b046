import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Redactor, openStore } from '../../store/index.ts';
import { GENESIS_HASH, eventBody, hashBody } from '../../store/audit/chain.ts';
import type { HashedFields } from '../../store/audit/chain.ts';
import { migrate } from '../../store/migrations/run.ts';
import { LEGACY_ENVELOPE_TAG, SNAPSHOT_CODEC } from '../../store/snapshots/encoding.ts';
import type { RunSnapshot } from '../../store/index.ts';
import { tempDir, track } from './helpers.ts';

const envelope = (runId: string, status: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    $schemaVersion: 1,
    runId,
    agentId: 'assistant',
    surface: 'cli',
    status,
    parentRunId: null,
    updatedAt: 1_700_000_000_000,
    snapshot: { status: 'active', value: status, context: { runId, note: 'é 日本 \u2028 "q"' } },
    ...extra,
  });

/**
 * A file at schema version 7 (the layout before migration 8), with snapshot rows that load, that
 * do not, and one whose envelope names another status than its column; and an audit chain.
 */
function version7File(): { path: string; events: number; headHash: string } {
  const path = join(tempDir(), 'snotra.db');
  const db = new Database(path);
  migrate(db, path, 7);
  const put = db.prepare(
    `INSERT INTO run_snapshots (run_id, agent_id, surface, status, parent_run_id, schema_version, payload, updated_at)
     VALUES (?, 'assistant', 'cli', ?, NULL, 1, ?, 1700000000000)`,
  );
  put.run('r-ok', 'waiting_for_approval', envelope('r-ok', 'waiting_for_approval'));
  put.run('r-garbled', 'running', '{"$schemaVersion":1,"runId":"r-garb');
  put.run('r-other-status', 'completed', envelope('r-other-status', 'running'));
  put.run('r-future', 'running', JSON.stringify({ $schemaVersion: 9, runId: 'r-future' }));
  put.run(
    'r-proto',
    'running',
    envelope('r-proto', 'running', { snapshot: JSON.parse('{"__proto__":{"x":1}}') }),
  );
  let prev = GENESIS_HASH;
  const insert = db.prepare(
    'INSERT INTO audit_log (seq, last_seq, run_id, body, hashes) VALUES (?, ?, ?, ?, ?)',
  );
  for (let seq = 1; seq <= 3; seq++) {
    const fields: HashedFields = [
      1,
      seq,
      1_700_000_000_000 + seq,
      'proposed',
      's-1',
      'assistant',
      'cli',
      'r-ok',
      `c${seq}`,
      'write_file',
      null,
      null,
      null,
      null,
      null,
      JSON.stringify({ seq }),
    ];
    const body = eventBody(fields);
    prev = hashBody(prev, body);
    insert.run(seq, seq, 'r-ok', `[${body}]`, Buffer.from(prev, 'hex'));
  }
  db.close();
  return { path, events: 3, headHash: prev };
}

/** What `get` gives for a run: the envelope, or the error's code and message. */
function load(get: (runId: string) => RunSnapshot | null, runId: string): unknown {
  try {
    return get(runId);
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message };
  }
}

describe('migration 8 (compact encoding)', () => {
  it('keeps what every old snapshot row loads as, compacts the ones that load, and keeps the chain', () => {
    const { path, events, headHash } = version7File();
    const runs = ['r-ok', 'r-garbled', 'r-other-status', 'r-future', 'r-proto'];

    // Before: a read-only open of the version-7 file reads its own layout.
    const old = track(openStore({ path, redactor: new Redactor(), readonly: true }));
    expect(old.schemaVersion).toBe(7);
    const before = runs.map((r) => load((id) => old.snapshots.get(id), r));
    expect(old.audit.verifyChain()).toMatchObject({ ok: true, count: events, headHash });
    old.close();
    expect(before[0]).toMatchObject({ runId: 'r-ok', status: 'waiting_for_approval' });
    expect(before.slice(1).map((b) => (b as { code: string }).code)).toEqual([
      'snapshot_malformed',
      undefined, // r-other-status loads from its envelope (status running)
      'snapshot_version_future',
      'forbidden_key',
    ]);

    const store = track(openStore({ path, redactor: new Redactor() }));
    expect(store.schemaVersion).toBeGreaterThanOrEqual(8);
    const after = runs.map((r) => load((id) => store.snapshots.get(id), r));
    // Every row loads as it did, and fails with the same error naming the same run.
    expect(after).toEqual(before);
    for (const [i, r] of runs.entries()) {
      if (i === 0 || i === 2) continue;
      expect((after[i] as { message: string }).message).toContain(`run_snapshots[${r}]`);
    }
    const tags = Object.fromEntries(
      (
        store.connection.prepare('SELECT run_id, payload FROM run_snapshots').all() as Array<{
          run_id: string;
          payload: Buffer;
        }>
      ).map((row) => [row.run_id, row.payload[0]]),
    );
    // The valid one is compacted; the others are kept verbatim (legacy envelope blobs).
    expect(tags).toEqual({
      'r-ok': SNAPSHOT_CODEC.tag,
      'r-garbled': LEGACY_ENVELOPE_TAG,
      'r-other-status': LEGACY_ENVELOPE_TAG,
      'r-future': LEGACY_ENVELOPE_TAG,
      'r-proto': LEGACY_ENVELOPE_TAG,
    });
    expect(
      store.connection
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'run_snapshots_status'")
        .pluck()
        .get(),
    ).toBe(0);
    expect(store.snapshots.list().map((r) => r.runId)).toEqual([...runs].sort());

    // The old audit rows verify as before; new rows (encoded) continue the chain, and the
    // plain-SQL view reads both.
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: events, headHash });
    store.audit.append({ kind: 'policy_decided', runId: 'r-ok', callId: 'c1', status: 'approval-required' });
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: events + 1 });
    const view = store.connection
      .prepare('SELECT seq, run_id, kind, detail FROM audit_events ORDER BY seq')
      .all();
    expect(view).toEqual([
      { seq: 1, run_id: 'r-ok', kind: 'proposed', detail: '{"seq":1}' },
      { seq: 2, run_id: 'r-ok', kind: 'proposed', detail: '{"seq":2}' },
      { seq: 3, run_id: 'r-ok', kind: 'proposed', detail: '{"seq":3}' },
      { seq: 4, run_id: 'r-ok', kind: 'policy_decided', detail: 'null' },
    ]);
    const stored = store.connection
      .prepare('SELECT body FROM audit_log WHERE seq = 4')
      .pluck()
      .get() as string;
    expect(stored.startsWith('\u0001')).toBe(true); // the fragment code of '[[1,'
    expect(stored).not.toContain('r-ok'); // the row's run id, a code
    // A rewritten snapshot of a kept row is stored compact (a finished run's: compressed).
    store.snapshots.put({
      runId: 'r-garbled',
      agentId: 'assistant',
      surface: 'cli',
      status: 'completed',
      snapshot: {},
    });
    expect(
      (
        store.connection
          .prepare("SELECT payload FROM run_snapshots WHERE run_id = 'r-garbled'")
          .pluck()
          .get() as Buffer
      )[0],
    ).toBe(SNAPSHOT_CODEC.tag);
  });
});
