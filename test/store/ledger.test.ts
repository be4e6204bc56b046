import { describe, expect, it } from 'vitest';
import { AuditKind, CallStatus, auditFieldsFromDecision } from '../../store/index.ts';
import type { Store } from '../../store/index.ts';
import { allowDecision, callInput, openTemp } from './helpers.ts';

function kindsOf(store: Store, callId: string): string[] {
  return store.audit
    .list()
    .filter((e) => e.callId === callId)
    .map((e) => e.kind);
}

describe('tool-call ledger', () => {
  it('writes started with its audit event, then completed with the redacted result', () => {
    const { store, clock, redactor } = openTemp();
    redactor.registerSecret('sk-result-secret');
    const begun = store.ledger.beginCall(callInput(1, { detail: { args: { path: 'src/a.ts' } } }));
    expect(begun).toMatchObject({
      created: true,
      entry: { status: 'started', attempt: 1, startedAt: clock.now },
    });
    const started = store.audit.list().at(-1);
    expect(started).toMatchObject({
      kind: 'started',
      callId: 'call-1',
      runId: 'run-1',
      sessionId: 'session-1',
      agentId: 'assistant',
      surface: 'chat',
      tool: 'write_file',
      risk: 'write-local',
      ruleId: 'mode.allow',
      resource: '/work/p/src/a.ts',
      status: 'started',
      detail: { idempotencyKey: 'idem-1', attempt: 1, args: { path: 'src/a.ts' } },
    });

    clock.advance(25);
    const done = store.ledger.completeCall('idem-1', {
      ok: true,
      echoed: 'key sk-result-secret',
      token: 't',
    });
    expect(done).toMatchObject({ status: 'completed', finishedAt: clock.now });
    expect(done.result).toEqual({ ok: true, echoed: 'key [REDACTED]', token: '[REDACTED]' });
    expect(store.ledger.lookup('idem-1')).toEqual(done);
    expect(kindsOf(store, 'call-1')).toEqual(['started', 'completed']);
  });

  it('records a whole allowed lifecycle in two commits', () => {
    const { store } = openTemp();
    const decided = auditFieldsFromDecision(allowDecision);
    const ids = {
      runId: 'run-1',
      callId: 'call-7',
      sessionId: 'session-1',
      agentId: 'assistant',
      tool: 'write_file',
    };
    store.transaction(() => {
      store.audit.append({ ...ids, kind: AuditKind.proposed, detail: { args: { path: 'src/a.ts' } } });
      store.audit.append({ ...ids, ...decided, kind: AuditKind.policyDecided });
      store.ledger.beginCall(callInput(7));
    });
    store.ledger.completeCall('idem-7', 'ok');
    expect(kindsOf(store, 'call-7')).toEqual(['proposed', 'policy_decided', 'started', 'completed']);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 4 });
  });

  it('never creates a second execution for the same idempotency key', () => {
    const { store } = openTemp();
    store.ledger.beginCall(callInput(1));
    const again = store.ledger.beginCall(callInput(1, { callId: 'call-1-retry' }));
    expect(again).toMatchObject({ created: false, entry: { status: 'started', callId: 'call-1' } });
    store.ledger.completeCall('idem-1', { v: 1 });
    const afterDone = store.ledger.beginCall(callInput(1));
    expect(afterDone).toMatchObject({ created: false, entry: { status: 'completed', result: { v: 1 } } });
    expect(kindsOf(store, 'call-1')).toEqual(['started', 'completed']);
    expect(kindsOf(store, 'call-1-retry')).toEqual([]);
  });

  it('answers lookups for unknown keys with null', () => {
    const { store } = openTemp();
    expect(store.ledger.lookup('never-started')).toBeNull();
  });

  it('fails a call with its redacted error and audits it', () => {
    const { store, redactor } = openTemp();
    redactor.registerSecret('pw-very-secret');
    store.ledger.beginCall(callInput(2));
    const failed = store.ledger.failCall('idem-2', new Error('login refused for pw-very-secret'));
    expect(failed.status).toBe(CallStatus.failed);
    expect(JSON.stringify(failed.error)).toContain('login refused for [REDACTED]');
    expect(JSON.stringify(store.audit.list())).not.toContain('pw-very-secret');
    expect(kindsOf(store, 'call-2')).toEqual(['started', 'failed']);
  });

  it('refuses to finish a call that is not started, writing nothing', () => {
    const { store } = openTemp();
    expect(() => store.ledger.completeCall('nope', 1)).toThrow(
      expect.objectContaining({ code: 'call_not_found' }),
    );
    store.ledger.beginCall(callInput(3));
    store.ledger.completeCall('idem-3', 1);
    const head = store.audit.head();
    expect(() => store.ledger.completeCall('idem-3', 2)).toThrow(
      expect.objectContaining({ code: 'call_not_started' }),
    );
    expect(() => store.ledger.failCall('idem-3', 'x')).toThrow(/completed, not started/);
    expect(store.audit.head()).toEqual(head);
    expect(store.ledger.lookup('idem-3')?.result).toBe(1);
  });

  it('marks started calls interrupted at restore, audited, and can retry one', () => {
    const { store, clock } = openTemp();
    store.ledger.beginCall(callInput(1));
    store.ledger.beginCall(callInput(2, { runId: 'run-2' }));
    store.ledger.beginCall(callInput(3));
    store.ledger.completeCall('idem-3', 'done');

    const onlyRun2 = store.ledger.markInterrupted({ runId: 'run-2' });
    expect(onlyRun2.map((e) => e.idempotencyKey)).toEqual(['idem-2']);
    clock.advance(1000);
    const rest = store.ledger.markInterrupted();
    expect(rest).toEqual([
      expect.objectContaining({ idempotencyKey: 'idem-1', status: 'interrupted', finishedAt: clock.now }),
    ]);
    expect(kindsOf(store, 'call-1')).toEqual(['started', 'interrupted']);
    expect(store.ledger.markInterrupted()).toEqual([]);

    expect(() => store.ledger.completeCall('idem-1', 'late')).toThrow(/interrupted, not started/);
    const retried = store.ledger.retryInterrupted('idem-1');
    expect(retried).toMatchObject({ status: 'started', attempt: 2, finishedAt: null });
    store.ledger.completeCall('idem-1', 'second try');
    expect(kindsOf(store, 'call-1')).toEqual(['started', 'interrupted', 'started', 'completed']);
    expect(() => store.ledger.retryInterrupted('idem-3')).toThrow(
      expect.objectContaining({ code: 'call_not_interrupted' }),
    );
    expect(store.audit.verifyChain().ok).toBe(true);
  });

  it('keeps ledger and audit together when a transaction rolls back', () => {
    const { store } = openTemp();
    expect(() =>
      store.transaction(() => {
        store.ledger.beginCall(callInput(1));
        throw new Error('crash before commit');
      }),
    ).toThrow();
    expect(store.ledger.lookup('idem-1')).toBeNull();
    expect(store.audit.head()).toBeNull();
  });

  it('refuses a durable begin inside a non-durable transaction instead of weakening it', () => {
    const { store } = openTemp();
    expect(() => store.transaction(() => store.ledger.beginCall(callInput(1), { durable: true }))).toThrow(
      expect.objectContaining({ code: 'durability_mismatch' }),
    );
    expect(store.ledger.lookup('idem-1')).toBeNull();
    expect(
      store.transaction(() => store.ledger.beginCall(callInput(1), { durable: true }), { durable: true })
        .created,
    ).toBe(true);
    expect(store.ledger.beginCall(callInput(2), { durable: true }).created).toBe(true);
    expect(store.connection.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('refuses invalid input naming the field', () => {
    const { store } = openTemp();
    expect(() => store.ledger.beginCall({ ...callInput(1), idempotencyKey: '' })).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('idempotencyKey') }),
    );
  });

  describe('inside a caller transaction (no savepoint per operation)', () => {
    /** Makes beginCall of call `boom` fail after its ledger row was written. */
    function failingAudit(store: ReturnType<typeof openTemp>['store']): void {
      store.connection.exec(
        `CREATE TEMP TRIGGER boom BEFORE INSERT ON main.ledger_open
         WHEN (SELECT call_id FROM main.ledger_calls WHERE idempotency_key = NEW.idempotency_key) = 'boom'
         BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
      );
    }

    it('a refusal thrown before any write leaves the transaction usable', () => {
      const { store } = openTemp();
      store.transaction(() => {
        store.ledger.beginCall(callInput(1));
        expect(() => store.ledger.completeCall('idem-2', 1)).toThrow(
          expect.objectContaining({ code: 'call_not_found' }),
        );
        store.ledger.completeCall('idem-1', 1);
        expect(() => store.ledger.completeCall('idem-1', 2)).toThrow(
          expect.objectContaining({ code: 'call_not_started' }),
        );
        expect(() => store.ledger.retryInterrupted('idem-1')).toThrow(
          expect.objectContaining({ code: 'call_not_interrupted' }),
        );
      });
      expect(store.ledger.lookup('idem-1')).toMatchObject({ status: 'completed', result: 1 });
      expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });
    });

    it('a failure after a write dooms the whole transaction, even when the caller catches it', () => {
      const { store } = openTemp();
      failingAudit(store);
      expect(() =>
        store.transaction(() => {
          store.ledger.beginCall(callInput(1));
          expect(() => store.ledger.beginCall({ ...callInput(2), callId: 'boom' })).toThrow(/disk on fire/);
          store.ledger.completeCall('idem-1', 1);
        }),
      ).toThrow(
        expect.objectContaining({
          code: 'transaction_doomed',
          message: expect.stringContaining('ledger.beginCall'),
        }),
      );
      expect(store.ledger.lookup('idem-1')).toBeNull();
      expect(store.ledger.lookup('idem-2')).toBeNull();
      expect(store.audit.head()).toBeNull();
      // A start that rolled back cannot be finished, whatever the ledger remembered of it.
      expect(() => store.ledger.completeCall('idem-1', 1)).toThrow(
        expect.objectContaining({ code: 'call_not_found' }),
      );
      expect(store.connection.prepare('SELECT count(*) FROM ledger_outcomes').pluck().get()).toBe(0);
      // The next transaction starts clean.
      store.ledger.beginCall(callInput(3));
      expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 1 });
    });

    it('a nested store.transaction is a savepoint: it takes the failed operation with it', () => {
      const { store } = openTemp();
      failingAudit(store);
      store.transaction(() => {
        store.ledger.beginCall(callInput(1));
        expect(() =>
          store.transaction(() => store.ledger.beginCall({ ...callInput(2), callId: 'boom' })),
        ).toThrow(/disk on fire/);
        store.ledger.completeCall('idem-1', 1);
      });
      expect(store.ledger.lookup('idem-1')).toMatchObject({ status: 'completed' });
      expect(store.ledger.lookup('idem-2')).toBeNull();
      expect(store.connection.prepare('SELECT count(*) FROM ledger_open').pluck().get()).toBe(0);
      expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });
    });
  });

  it('protects final rows at the database level too', () => {
    const { store } = openTemp();
    store.ledger.beginCall(callInput(1));
    store.ledger.completeCall('idem-1', 1);
    store.ledger.beginCall(callInput(2));
    store.ledger.markInterrupted();
    const db = store.connection;
    // Restarting a completed call, rewriting or removing its outcome, adding a second one.
    expect(() =>
      db.prepare("UPDATE ledger_calls SET attempt = 2 WHERE idempotency_key = 'idem-1'").run(),
    ).toThrow(/final/);
    expect(() => db.prepare("UPDATE ledger_outcomes SET status = 'failed'").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM ledger_outcomes').run()).toThrow(/append-only/);
    expect(() =>
      db.prepare("INSERT INTO ledger_outcomes VALUES ('idem-1', 1, 'failed', NULL, '\"x\"', 1)").run(),
    ).toThrow(/UNIQUE|PRIMARY KEY/);
    expect(() => db.prepare('DELETE FROM ledger_calls').run()).toThrow(/DELETE refused/);
    // An interrupted attempt may be restarted, once, by attempt + 1 only; identity never changes.
    expect(() =>
      db.prepare("UPDATE ledger_calls SET attempt = 3 WHERE idempotency_key = 'idem-2'").run(),
    ).toThrow(/final/);
    expect(() =>
      db
        .prepare("UPDATE ledger_calls SET attempt = 2, tool = 'shell' WHERE idempotency_key = 'idem-2'")
        .run(),
    ).toThrow(/final/);
    // The read view of version 2 cannot be written through.
    expect(() => db.prepare("UPDATE tool_calls SET status = 'started'").run()).toThrow(/view/);
    expect(store.ledger.lookup('idem-1')).toMatchObject({ status: 'completed', attempt: 1, result: 1 });
    expect(store.ledger.retryInterrupted('idem-2')).toMatchObject({ status: 'started', attempt: 2 });
  });
});
