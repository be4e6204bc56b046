import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Redactor, SCHEMA_VERSION, openStore, sqliteRunRecordBackend } from '../../store/index.ts';
import type { RunSnapshot } from '../../store/index.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { tempDir, track } from './helpers.ts';

// Migration 021 gives every run snapshot a revision (the compare-and-set of RunRecordBackend).
// A file of version 20 has none: read-only, its runs read at revision 1 without a byte written;
// opened writable, it migrates and every run starts at revision 1.

const FIXTURE = join(import.meta.dirname, 'fixtures', 'schema-v20.sql');

/** A state dir whose database is the frozen dump of schema version 20. */
function stateDirAtV20(): { stateDir: string; db: string } {
  const stateDir = join(tempDir(), 'state');
  mkdirSync(stateDir);
  const db = join(stateDir, 'snotra.db');
  const raw = new Database(db);
  raw.exec(readFileSync(FIXTURE, 'utf8'));
  raw.close();
  return { stateDir, db };
}

const fileHash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The runs the fixture holds, as they read back. */
const RUNS: Record<string, RunSnapshot> = {
  'assistant:v20-done': {
    $schemaVersion: 1,
    runId: 'assistant:v20-done',
    agentId: 'assistant',
    surface: 'chat',
    status: 'completed',
    parentRunId: null,
    updatedAt: 1_766_000_000_000,
    snapshot: {
      status: 'done',
      value: 'completed',
      output: { text: 'Notes written.' },
      context: { step: 3 },
    },
  },
  'assistant:v20-parked': {
    $schemaVersion: 1,
    runId: 'assistant:v20-parked',
    agentId: 'assistant',
    surface: 'scheduled',
    status: 'waiting_for_approval',
    parentRunId: null,
    updatedAt: 1_766_000_001_000,
    snapshot: {
      status: 'active',
      value: { running: 'waitingForApproval' },
      context: { step: 1, approvalId: 'ap-v20' },
    },
  },
  'explorer:v20-child': {
    $schemaVersion: 1,
    runId: 'explorer:v20-child',
    agentId: 'explorer',
    surface: 'delegation',
    status: 'running',
    parentRunId: 'assistant:v20-parked',
    updatedAt: 1_766_000_002_000,
    snapshot: { status: 'active', value: 'thinking', context: { step: 0 } },
  },
};

describe('a store file written by schema version 20 (run snapshots without a revision)', () => {
  it('opens read-only without migrating: its runs read back at revision 1, and writes are refused', async () => {
    const { stateDir, db } = stateDirAtV20();
    const hash = fileHash(db);
    const shown = await runCliInProcess(
      ['runs', 'show', 'assistant:v20-parked', '--state-dir', stateDir, '--json'],
      stateDir,
    );
    expect(shown.err).toBe('');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({
      summary: { runId: 'assistant:v20-parked', status: 'waiting_for_approval' },
      context: { approvalId: 'ap-v20' },
    });

    const store = track(openStore({ path: db, redactor: new Redactor(), readonly: true }));
    expect(store.schemaVersion).toBe(20);
    const backend = sqliteRunRecordBackend(store.snapshots);
    for (const [runId, record] of Object.entries(RUNS)) {
      expect(store.snapshots.versioned(runId), runId).toEqual({ envelope: record, revision: 1 });
      expect(await backend.get(runId), runId).toEqual({ record, revision: 1 });
    }
    expect((await backend.ids()).sort()).toEqual(Object.keys(RUNS).sort());
    expect(store.snapshots.listUnfinished().map((r) => r.runId)).toEqual([
      'assistant:v20-parked',
      'explorer:v20-child',
    ]);
    const resumed = { ...RUNS['assistant:v20-parked'], status: 'resuming' } as RunSnapshot;
    await expect(backend.update(resumed, 1)).rejects.toMatchObject({ code: 'readonly_store' });
    await expect(backend.create({ ...resumed, runId: 'assistant:v20-new' })).rejects.toMatchObject({
      code: 'readonly_store',
    });
    store.close();
    expect(fileHash(db)).toBe(hash);
    expect(readdirSync(stateDir)).toEqual(['snotra.db']);
  });

  it('migrates when opened writable: every run kept at revision 1, then each write moves its revision on', async () => {
    const { db } = stateDirAtV20();
    const store = track(openStore({ path: db, redactor: new Redactor(), clock: () => 1_766_000_009_000 }));
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(21);
    const backend = sqliteRunRecordBackend(store.snapshots);
    for (const [runId, record] of Object.entries(RUNS))
      expect(await backend.get(runId), runId).toEqual({ record, revision: 1 });

    // Compare-and-set at the revision the migration gave it.
    const resumed = { ...RUNS['assistant:v20-parked'], status: 'resuming', updatedAt: 1_766_000_003_000 };
    expect(await backend.update(resumed as RunSnapshot, 1)).toBe(2);
    expect(await backend.update({ ...resumed, status: 'completed' } as RunSnapshot, 1)).toBeNull();
    expect(await backend.get('assistant:v20-parked')).toEqual({ record: resumed, revision: 2 });
    expect(await backend.create(RUNS['assistant:v20-done'] as RunSnapshot)).toBeNull();

    // The run host's own writes (put) move the revision on too; an unchanged row is not rewritten.
    const child = RUNS['explorer:v20-child'] as RunSnapshot;
    const { $schemaVersion: _v, updatedAt: _t, ...fields } = child;
    store.snapshots.put({
      ...fields,
      snapshot: { status: 'active', value: 'thinking', context: { step: 1 } },
    });
    expect(store.snapshots.versioned(child.runId)?.revision).toBe(2);
    store.snapshots.put({
      ...fields,
      snapshot: { status: 'active', value: 'thinking', context: { step: 1 } },
    });
    expect(store.snapshots.versioned(child.runId)?.revision).toBe(2);
    expect(await backend.update(child, 1)).toBeNull();

    // The unfinished runs are still found by their index.
    expect(store.snapshots.listUnfinished().map((r) => [r.runId, r.status])).toEqual([
      ['assistant:v20-parked', 'resuming'],
      ['explorer:v20-child', 'running'],
    ]);
  });
});
