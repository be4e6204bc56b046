import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Redactor, SCHEMA_VERSION, StoreOpenError, openStore } from '../../store/index.ts';
import { MIGRATIONS } from '../../store/migrations/index.ts';
import { tempDir, track } from './helpers.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');

function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function objectNames(db: Database.Database): string[] {
  return (
    db
      .prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[]
  ).sort();
}

/** Writes a database from a frozen SQL dump of an earlier schema version. */
function databaseFromDump(dump: string): string {
  const path = join(tempDir(), 'snotra.db');
  const db = new Database(path);
  db.exec(readFileSync(join(FIXTURES, dump), 'utf8'));
  db.close();
  return path;
}

describe('migrations', () => {
  it('are numbered 1..n without gaps and the last one is the schema version', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_m, i) => i + 1));
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it('bring an empty database to the current version in WAL mode', () => {
    const path = join(tempDir(), 'state', 'snotra.db');
    const store = track(openStore({ path, redactor: new Redactor() }));
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    const db = store.connection;
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(objectNames(db)).toEqual(
      expect.arrayContaining([
        'audit_events',
        'tool_calls',
        'approvals',
        'tool_calls_started',
        'approvals_pending_expiry',
      ]),
    );
    expect(store.integrityCheck()).toBe('ok');
  });

  it('migrate a database written by schema version 1 and keep its data and chain', () => {
    const path = databaseFromDump('schema-v1.sql');
    const before = new Database(path);
    expect(before.pragma('user_version', { simple: true })).toBe(1);
    expect(objectNames(before)).not.toContain('tool_calls_started');
    before.close();

    const store = track(openStore({ path, redactor: new Redactor() }));
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(objectNames(store.connection)).toEqual(
      expect.arrayContaining(['tool_calls_started', 'approvals_pending_expiry']),
    );
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 11 });
    expect(store.ledger.lookup('idem-1')).toMatchObject({ status: 'completed', result: { bytesWritten: 2 } });
    expect(store.snapshots.get('run-v1-a')?.snapshot).toMatchObject({ value: { running: 'modelStep' } });
    expect(store.approvals.listPending({ taskId: 'nightly' }).map((a) => a.id)).toEqual(['appr-v1-1']);
    expect(store.approvals.get('appr-v1-2')).toMatchObject({ status: 'denied', decidedBy: 'alice' });
    expect(store.standingApprovals.listActive('nightly')).toEqual([]);
    // The v2 indexes serve what version 1 wrote.
    expect(store.ledger.markInterrupted().map((e) => e.idempotencyKey)).toEqual(['idem-2']);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 12 });
  });

  it('is a no-op on a database already at the current version', () => {
    const path = join(tempDir(), 'snotra.db');
    track(openStore({ path, redactor: new Redactor() })).close();
    const again = track(openStore({ path, redactor: new Redactor() }));
    expect(again.schemaVersion).toBe(SCHEMA_VERSION);
  });

  it('refuse a database written by a newer version, naming the file and both versions, and change nothing', () => {
    const path = join(tempDir(), 'snotra.db');
    track(openStore({ path, redactor: new Redactor() })).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    raw.pragma('journal_mode = DELETE');
    raw.close();
    const hash = fileHash(path);

    let error: unknown;
    try {
      openStore({ path, redactor: new Redactor() });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreOpenError);
    const e = error as StoreOpenError;
    expect(e.code).toBe('database_newer');
    expect(e.message).toContain(path);
    expect(e.message).toContain(`schema version ${SCHEMA_VERSION + 5}`);
    expect(e.message).toContain(`schema version ${SCHEMA_VERSION}`);
    expect(fileHash(path)).toBe(hash);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(() => openStore({ path, redactor: new Redactor(), readonly: true })).toThrow(/newer Snotra/);
  });

  it('refuse a SQLite file of another application', () => {
    const path = join(tempDir(), 'other.db');
    const raw = new Database(path);
    raw.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    raw.close();
    const hash = fileHash(path);
    expect(() => openStore({ path, redactor: new Redactor() })).toThrow(
      expect.objectContaining({ code: 'not_snotra_database' }),
    );
    expect(fileHash(path)).toBe(hash);
  });

  it('open read-only without migrating, and refuse writes there', () => {
    const path = databaseFromDump('schema-v1.sql');
    const hash = fileHash(path);
    const store = track(openStore({ path, redactor: new Redactor(), readonly: true }));
    expect(store.schemaVersion).toBe(1);
    expect(store.audit.list({ runId: 'run-v1-a' }).length).toBeGreaterThan(0);
    expect(() => store.audit.append({ kind: 'root_changed' })).toThrow(
      expect.objectContaining({ code: 'readonly_store' }),
    );
    store.close();
    expect(fileHash(path)).toBe(hash);
    expect(() =>
      openStore({ path: join(tempDir(), 'missing.db'), redactor: new Redactor(), readonly: true }),
    ).toThrow(expect.objectContaining({ code: 'open_failed' }));
  });

  it('creates the state folder and the file private to the user', () => {
    const path = join(tempDir(), 'fresh', 'state', 'snotra.db');
    track(openStore({ path, redactor: new Redactor() }));
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
