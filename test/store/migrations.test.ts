import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Redactor, SCHEMA_VERSION, StoreOpenError, openStore } from '../../store/index.ts';
import { MIGRATIONS } from '../../store/migrations/index.ts';
import { hashEvent } from '../../store/audit/chain.ts';
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
        'audit_log',
        'audit_events',
        'ledger_calls',
        'ledger_outcomes',
        'ledger_open',
        'tool_calls',
        'approvals',
        'approvals_pending_expiry',
      ]),
    );
    expect(objectNames(db)).not.toContain('tool_calls_started');
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
      expect.arrayContaining(['ledger_open', 'approvals_pending_expiry']),
    );
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 11 });
    expect(store.ledger.lookup('idem-1')).toMatchObject({ status: 'completed', result: { bytesWritten: 2 } });
    expect(store.snapshots.get('run-v1-a')?.snapshot).toMatchObject({ value: { running: 'modelStep' } });
    expect(store.approvals.listPending({ taskId: 'nightly' }).map((a) => a.id)).toEqual(['appr-v1-1']);
    expect(store.approvals.get('appr-v1-2')).toMatchObject({ status: 'denied', decidedBy: 'alice' });
    expect(store.standingApprovals.listActive('nightly')).toEqual([]);
    // Version 3's ledger serves what version 1 wrote.
    expect(store.ledger.markInterrupted().map((e) => e.idempotencyKey)).toEqual(['idem-2']);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 12 });
  });

  it('migrate a database written by schema version 2 byte for byte: chain, ledger states, text needing escapes', () => {
    const path = databaseFromDump('schema-v2.sql');
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(2);
    const oldEvents = raw.prepare('SELECT seq, hash, detail FROM audit_events ORDER BY seq').all();
    raw.close();

    const store = track(openStore({ path, redactor: new Redactor() }));
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 15 });
    // The same events, hashes and links as version 2 stored them, read through the new layout…
    const events = store.audit.list();
    expect(events.map((e) => ({ seq: e.seq, hash: e.hash, detail: JSON.stringify(e.detail) }))).toEqual(
      oldEvents,
    );
    expect(events[0]?.detail).toMatchObject({
      args: { content: 'q"uote \\ back\tslash\u0001\u001f\n line\u2028sep é 日本 🐉' },
    });
    events.forEach((e, i) => expect(e.prevHash).toBe(i === 0 ? '0'.repeat(64) : events[i - 1]?.hash));
    // …and through the version-2 shaped view.
    const view = store.connection.prepare('SELECT * FROM audit_events WHERE seq = 1').get();
    expect(view).toMatchObject({
      seq: 1,
      v: 1,
      kind: 'proposed',
      run_id: 'run-v2-a',
      prev_hash: '0'.repeat(64),
    });

    // Every ledger state of version 2 keeps its meaning.
    expect(store.ledger.lookup('idem-v2-1')).toMatchObject({
      status: 'completed',
      attempt: 1,
      result: { bytesWritten: 3 },
    });
    expect(store.ledger.lookup('idem-v2-2')).toMatchObject({ status: 'failed', error: { code: 'exit_1' } });
    expect(store.ledger.lookup('idem-v2-3')).toMatchObject({
      status: 'completed',
      attempt: 2,
      result: { status: 200 },
    });
    expect(store.ledger.lookup('idem-v2-4')).toMatchObject({ status: 'interrupted', attempt: 1 });
    expect(store.ledger.lookup('idem-v2-5')).toMatchObject({ status: 'started', runId: 'run-v2-b' });
    expect(() => store.ledger.completeCall('idem-v2-1', 'again')).toThrow(
      expect.objectContaining({ code: 'call_not_started' }),
    );
    expect(store.ledger.markInterrupted().map((e) => e.idempotencyKey)).toEqual(['idem-v2-5']);
    expect(store.ledger.retryInterrupted('idem-v2-4')).toMatchObject({ status: 'started', attempt: 2 });
    store.ledger.completeCall('idem-v2-4', { sent: true });
    expect(store.approvals.listPending({ taskId: 'nightly' }).map((a) => a.id)).toEqual(['appr-v2-1']);
    expect(store.snapshots.get('run-v2-b')?.status).toBe('waiting_for_approval');
    // New events continue the migrated chain.
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 18 });
  });

  // Version 3 drops the stored prev_hash (the previous row's hash, covered by the next hash):
  // what it guarded — content, order, removals — stays detected after the migration.
  it('migrates a version-2 log longer than one copy page (1,000 rows) and keeps every link', () => {
    const path = databaseFromDump('schema-v2.sql');
    const raw = new Database(path);
    const tail = raw.prepare('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1').get() as {
      seq: number;
      hash: string;
    };
    const insert = raw.prepare(
      `INSERT INTO audit_events (seq, v, at, kind, session_id, agent_id, surface, run_id, call_id, tool, risk,
         rule_id, resource, status, standing_approval_id, detail, prev_hash, hash)
       VALUES (@seq, @v, @at, @kind, @session_id, @agent_id, @surface, @run_id, @call_id, @tool, @risk,
         @rule_id, @resource, @status, @standing_approval_id, @detail, @prev_hash, @hash)`,
    );
    let prev = tail.hash;
    raw.transaction(() => {
      for (let seq = tail.seq + 1; seq <= 2_500; seq++) {
        const row = {
          seq,
          v: 1,
          at: 1_700_200_000_000 + seq,
          kind: 'root_changed',
          session_id: null,
          agent_id: null,
          surface: null,
          run_id: seq % 3 === 0 ? 'run-many' : null,
          call_id: null,
          tool: null,
          risk: null,
          rule_id: null,
          resource: `/w/${seq}`,
          status: null,
          standing_approval_id: null,
          detail: JSON.stringify({ seq, note: 'é\u2028"' }),
        };
        const hash = hashEvent(prev, row);
        insert.run({ ...row, prev_hash: prev, hash });
        prev = hash;
      }
    })();
    raw.close();
    const store = track(openStore({ path, redactor: new Redactor() }));
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2_500, headHash: prev });
    expect(store.audit.list({ runId: 'run-many' })).toHaveLength(828);
  });

  it('keeps a tampered version-2 chain broken at the same event after migrating', () => {
    for (const [sql, reason] of [
      ["UPDATE audit_events SET tool = 'read_file' WHERE seq = 7", 'hash_mismatch'],
      ["UPDATE audit_events SET hash = 'not-hex' WHERE seq = 7", 'hash_mismatch'],
      [
        'DELETE FROM audit_events WHERE seq = 6; ' +
          'UPDATE audit_events SET prev_hash = (SELECT hash FROM audit_events WHERE seq = 5) WHERE seq = 7',
        'seq_gap',
      ],
    ] as const) {
      const path = databaseFromDump('schema-v2.sql');
      const raw = new Database(path);
      raw.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete');
      raw.exec(sql);
      raw.close();
      const legacy = track(openStore({ path, redactor: new Redactor(), readonly: true }));
      const before = legacy.audit.verifyChain();
      legacy.close();
      expect(before).toMatchObject({ ok: false });
      const store = track(openStore({ path, redactor: new Redactor() }));
      expect(store.audit.verifyChain(), sql).toMatchObject({ ok: false, brokenSeq: 7, reason });
      store.close();
    }
  });

  it('reads a version-2 file opened read-only through its own layout, and writes nothing', () => {
    const path = databaseFromDump('schema-v2.sql');
    const hash = fileHash(path);
    const store = track(openStore({ path, redactor: new Redactor(), readonly: true }));
    expect(store.schemaVersion).toBe(2);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 15 });
    expect(store.audit.list({ runId: 'run-v2-b' }).map((e) => e.kind)).toEqual([
      'started',
      'approval_requested',
    ]);
    expect(store.ledger.lookup('idem-v2-3')).toMatchObject({ status: 'completed', attempt: 2 });
    expect(() => store.ledger.markInterrupted()).toThrow(expect.objectContaining({ code: 'readonly_store' }));
    store.close();
    expect(fileHash(path)).toBe(hash);
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
