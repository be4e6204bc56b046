import { describe, expect, it } from 'vitest';
import {
  AUDIT_KINDS,
  AuditKind,
  GENESIS_HASH,
  auditFieldsFromDecision,
  openStore,
} from '../../store/index.ts';
import type { Store } from '../../store/index.ts';
import { hashBody } from '../../store/audit/chain.ts';
import { decodeAuditBody, encodeAuditBody } from '../../store/audit/encoding.ts';
import { allowDecision, openTemp, track } from './helpers.ts';

function fill(store: Store, n: number): void {
  for (let i = 0; i < n; i++) {
    store.audit.append({
      kind: AuditKind.proposed,
      runId: i % 2 === 0 ? 'run-a' : 'run-b',
      callId: `c${i}`,
      detail: { i },
    });
  }
}

/**
 * Lets a test play attacker: drop the append-only triggers, then run raw SQL. The attacker knows
 * the row encoding (store/audit/encoding.ts): `audit_text(body, run_id)` decodes a body and
 * `audit_stored(text, run_id)` encodes one as the store would.
 */
function tamper(store: Store, sql: string, ...params: unknown[]): void {
  const db = store.connection;
  db.function('audit_text', (body: unknown, runId: unknown) =>
    decodeAuditBody(String(body), typeof runId === 'string' ? runId : null),
  );
  db.function('audit_stored', (text: unknown, runId: unknown) =>
    encodeAuditBody(String(text), typeof runId === 'string' ? runId : null),
  );
  db.exec('DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;');
  db.prepare(sql).run(...params);
}

describe('audit log', () => {
  it('appends events with every identifying field and links each to the previous hash', () => {
    const { store, clock } = openTemp();
    const decided = auditFieldsFromDecision(allowDecision);
    const first = store.audit.append({
      kind: AuditKind.policyDecided,
      sessionId: 's-1',
      agentId: 'assistant',
      surface: 'chat',
      runId: 'run-1',
      callId: 'call-1',
      tool: 'write_file',
      standingApprovalId: 'stand-1',
      ...decided,
    });
    expect(first).toMatchObject({
      seq: 1,
      at: clock.now,
      kind: 'policy_decided',
      sessionId: 's-1',
      agentId: 'assistant',
      surface: 'chat',
      runId: 'run-1',
      callId: 'call-1',
      tool: 'write_file',
      risk: 'write-local',
      ruleId: 'mode.allow',
      resource: '/work/p/src/a.ts',
      status: 'allow',
      standingApprovalId: 'stand-1',
      prevHash: GENESIS_HASH,
      detail: { reason: 'mode_allow', ruleSource: 'mode', step: 9, targets: allowDecision.targets },
    });
    const second = store.audit.append({ kind: AuditKind.rootChanged, resource: '/work/other' });
    expect(second.prevHash).toBe(first.hash);
    expect(store.audit.list()).toEqual([first, second]);
    expect(store.audit.verifyChain()).toEqual({ ok: true, count: 2, headSeq: 2, headHash: second.hash });
  });

  it('knows every lifecycle, grant, root-change, mode-change and spawn kind', () => {
    expect(AUDIT_KINDS).toEqual([
      'proposed',
      'policy_decided',
      'approval_requested',
      'approval_resolved',
      'started',
      'completed',
      'failed',
      'interrupted',
      'session_approval_granted',
      'session_approval_revoked',
      'standing_approval_granted',
      'standing_approval_revoked',
      'root_changed',
      'mode_changed',
      'agent_spawned',
      'run_failed',
      'platform_paired',
      'platform_unpaired',
      'platform_reply_unknown',
      'bus_permission_denied',
      'call_elsewhere',
      'run_taken_over',
      'call_refused',
      'rewind',
      'session_compacted',
    ]);
  });

  it('refuses unknown kinds and bad fields before writing', () => {
    const { store } = openTemp();
    expect(() => store.audit.append({ kind: 'deleted' as AuditKind })).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('kind') }),
    );
    expect(() => store.audit.append({ kind: AuditKind.proposed, risk: 'root' as 'read' })).toThrow(/risk/);
    expect(store.audit.head()).toBeNull();
  });

  it('lists one run, pages with afterSeq and limit', () => {
    const { store } = openTemp();
    fill(store, 10);
    expect(store.audit.list({ runId: 'run-a' }).map((e) => e.seq)).toEqual([1, 3, 5, 7, 9]);
    expect(store.audit.list({ runId: 'run-a', afterSeq: 3, limit: 2 }).map((e) => e.seq)).toEqual([5, 7]);
    expect(store.audit.list({ afterSeq: 8 }).map((e) => e.seq)).toEqual([9, 10]);
  });

  it('has() answers what list({ runId }).some() answers on run, call id and kind', () => {
    const { store } = openTemp();
    fill(store, 10); // c0..c9 proposed, alternating run-a / run-b
    store.audit.append({ kind: AuditKind.policyDecided, runId: 'run-a', callId: 'c4' });
    store.audit.append({ kind: AuditKind.proposed, runId: 'run-c', callId: 'c0' });
    store.audit.append({ kind: AuditKind.proposed, runId: 'run-d' }); // no call id
    const viaList = (runId: string, callId: string, kind: string): boolean =>
      store.audit.list({ runId }).some((e) => e.callId === callId && e.kind === kind);
    const cases: Array<[string, string, string]> = [];
    for (const runId of ['run-a', 'run-b', 'run-c', 'run-d', 'run-none'])
      for (const callId of ['c0', 'c1', 'c4', 'c9', 'c10', ''])
        for (const kind of ['proposed', 'policy_decided', 'run_completed']) cases.push([runId, callId, kind]);
    for (const [runId, callId, kind] of cases) {
      expect(store.audit.has(runId, callId, kind), `${runId} ${callId} ${kind}`).toBe(
        viaList(runId, callId, kind),
      );
    }
    expect(store.audit.has('run-a', 'c4', 'policy_decided')).toBe(true);
    expect(store.audit.has('run-b', 'c4', 'proposed')).toBe(false); // c4 is run-a's
    // Events of the open transaction, not yet written as rows, count too; a rollback forgets them.
    expect(() =>
      store.transaction(() => {
        store.audit.append({ kind: AuditKind.approvalRequested, runId: 'run-b', callId: 'c5' });
        expect(store.audit.has('run-b', 'c5', 'approval_requested')).toBe(true);
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(store.audit.has('run-b', 'c5', 'approval_requested')).toBe(false);
    // A row whose body is not a JSON array (tampered) holds no event for either reading.
    expect(store.audit.has('run-c', 'c0', 'proposed')).toBe(true);
    tamper(store, "UPDATE audit_log SET body = audit_stored('{}', run_id) WHERE run_id = 'run-c'");
    expect(store.audit.has('run-c', 'c0', 'proposed')).toBe(false);
    expect(store.audit.list({ runId: 'run-c' })).toEqual([]);
  });

  it('redacts detail and resource with the store redactor', () => {
    const { store, redactor } = openTemp();
    redactor.registerSecret('tok-1234567890');
    const event = store.audit.append({
      kind: AuditKind.proposed,
      resource: 'https://api.example.com/?q=tok-1234567890',
      detail: {
        args: { url: 'x', headers: { Authorization: 'Bearer tok-1234567890' } },
        note: 'tok-1234567890',
      },
    });
    expect(JSON.stringify(event)).not.toContain('tok-1234567890');
    expect(JSON.stringify(store.audit.list())).not.toContain('tok-1234567890');
  });

  it('refuses UPDATE and DELETE with triggers', () => {
    const { store } = openTemp();
    fill(store, 2);
    const db = store.connection;
    expect(() => db.prepare("UPDATE audit_log SET body = 'x' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM audit_log WHERE seq = 2').run()).toThrow(/append-only/);
    // The version-2 shaped view is read-only.
    expect(() => db.prepare("UPDATE audit_events SET status = 'x' WHERE seq = 1").run()).toThrow(/view/);
    expect(store.audit.verifyChain().ok).toBe(true);
  });

  it('verifyChain names the first altered event', () => {
    const { store } = openTemp();
    fill(store, 6);
    tamper(store, `UPDATE audit_log SET body = replace(body, '{\\"i\\":3}', '{\\"i\\":99}') WHERE seq = 4`);
    expect(store.audit.list({ afterSeq: 3, limit: 1 })[0]?.detail).toEqual({ i: 99 });
    expect(store.audit.verifyChain()).toMatchObject({
      ok: false,
      brokenSeq: 4,
      reason: 'hash_mismatch',
      count: 3,
    });
  });

  it('verifyChain names the event after a deleted one', () => {
    const { store } = openTemp();
    fill(store, 6);
    tamper(store, 'DELETE FROM audit_log WHERE seq = 3');
    expect(store.audit.verifyChain()).toMatchObject({ ok: false, brokenSeq: 4, reason: 'seq_gap' });
  });

  it('verifyChain catches a rewritten event whose hash was recomputed', () => {
    const { store } = openTemp();
    fill(store, 5);
    const [first] = store.audit.list({ limit: 1 });
    const row = store.connection.prepare('SELECT body, run_id FROM audit_log WHERE seq = 2').get() as {
      body: string;
      run_id: string;
    };
    const body = decodeAuditBody(row.body, row.run_id);
    const forged = body.replace('{\\"i\\":1}', '{\\"i\\":\\"forged\\"}');
    expect(forged).not.toBe(body);
    // The forger recomputes event 2's own hash; event 3's hash still covers the old one.
    tamper(
      store,
      'UPDATE audit_log SET body = ?, hashes = ? WHERE seq = 2',
      encodeAuditBody(forged, row.run_id),
      // The row holds one event: its body is the row's body without the outer brackets.
      Buffer.from(hashBody(first?.hash ?? '', forged.slice(1, -1)), 'hex'),
    );
    expect(store.audit.verifyChain()).toMatchObject({
      ok: false,
      brokenSeq: 3,
      reason: 'hash_mismatch',
      count: 2,
    });
  });

  it('verifyChain catches an event filed under another run or seq than its content names', () => {
    const moved = openTemp().store;
    fill(moved, 4);
    tamper(moved, "UPDATE audit_log SET run_id = 'run-b' WHERE seq = 3");
    // The row's run id is part of its stored body (encoding.ts): moved, the body decodes to
    // another text than was hashed; either check names the event.
    expect(moved.audit.verifyChain()).toMatchObject({
      ok: false,
      brokenSeq: 3,
      reason: expect.stringMatching(/^(row_mismatch|hash_mismatch)$/),
    });

    const swapped = openTemp().store;
    fill(swapped, 4);
    // Rows 2 and 3 trade places: both keep their own hashes, but the seqs they name disagree.
    tamper(swapped, 'UPDATE audit_log SET seq = seq + 100, last_seq = last_seq + 100 WHERE seq IN (2, 3)');
    swapped.connection.prepare('UPDATE audit_log SET seq = 2, last_seq = 2 WHERE seq = 103').run();
    swapped.connection.prepare('UPDATE audit_log SET seq = 3, last_seq = 3 WHERE seq = 102').run();
    expect(swapped.audit.verifyChain()).toMatchObject({ ok: false, brokenSeq: 2, reason: 'row_mismatch' });
  });

  it('rolls an event back with the transaction it belongs to', () => {
    const { store } = openTemp();
    expect(() =>
      store.transaction(() => {
        store.audit.append({ kind: AuditKind.proposed });
        throw new Error('model step failed');
      }),
    ).toThrow('model step failed');
    expect(store.audit.head()).toBeNull();
    store.audit.append({ kind: AuditKind.proposed });
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 1 });
  });

  it('continues the chain correctly after a nested rollback inside a transaction', () => {
    const { store } = openTemp();
    store.transaction(() => {
      store.audit.append({ kind: AuditKind.proposed, callId: 'a' });
      expect(() =>
        store.transaction(() => {
          store.audit.append({ kind: AuditKind.proposed, callId: 'b' });
          throw new Error('inner step failed');
        }),
      ).toThrow('inner step failed');
      store.audit.append({ kind: AuditKind.proposed, callId: 'c' });
    });
    expect(store.audit.list().map((e) => [e.seq, e.callId])).toEqual([
      [1, 'a'],
      [2, 'c'],
    ]);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });
  });

  it('sees events appended by another connection', () => {
    const { store, path, redactor } = openTemp();
    store.audit.append({ kind: AuditKind.proposed, callId: 'a' });
    const other = track(openStore({ path, redactor }));
    other.audit.append({ kind: AuditKind.proposed, callId: 'b' });
    store.audit.append({ kind: AuditKind.proposed, callId: 'c' });
    expect(store.audit.list().map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 3 });
  });

  it('maps a Decision with several or no targets', () => {
    const two = auditFieldsFromDecision({
      ...allowDecision,
      targets: [
        { argument: 'a', input: 'x', resolved: '/x', root: 'p', access: 'read' },
        { argument: 'b', input: 'y', resolved: null, root: null, access: null },
      ],
    });
    expect(two.resource).toBe('["/x","y"]');
    expect(auditFieldsFromDecision({ ...allowDecision, targets: [] }).resource).toBeNull();
  });
});

describe('audit rows holding several events (schema version 3)', () => {
  /** 150 events of run-a, then 3 of run-b, then 2 of run-a, in one transaction. */
  function grouped(store: Store): void {
    store.transaction(() => {
      for (let i = 0; i < 150; i++)
        store.audit.append({ kind: AuditKind.proposed, runId: 'run-a', detail: { i } });
      for (let i = 0; i < 3; i++)
        store.audit.append({ kind: AuditKind.proposed, runId: 'run-b', detail: { i } });
      for (let i = 0; i < 2; i++)
        store.audit.append({ kind: AuditKind.proposed, runId: 'run-a', detail: { i } });
    });
  }

  it('stores one transaction’s events of one run in few rows, and reads them back one by one', () => {
    const { store } = openTemp();
    grouped(store);
    const rows = store.connection
      .prepare('SELECT seq, last_seq, run_id FROM audit_log ORDER BY seq')
      .all() as Array<{ seq: number; last_seq: number; run_id: string }>;
    expect(rows).toEqual([
      { seq: 1, last_seq: 64, run_id: 'run-a' },
      { seq: 65, last_seq: 128, run_id: 'run-a' },
      { seq: 129, last_seq: 150, run_id: 'run-a' },
      { seq: 151, last_seq: 153, run_id: 'run-b' },
      { seq: 154, last_seq: 155, run_id: 'run-a' },
    ]);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 155, headSeq: 155 });
    const events = store.audit.list();
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 155 }, (_, i) => i + 1));
    events.forEach((e, i) => expect(e.prevHash).toBe(i === 0 ? GENESIS_HASH : events[i - 1]?.hash));
    expect(new Set(events.map((e) => e.hash)).size).toBe(155);
    // Windows that start and end inside rows; one run's events across rows.
    expect(store.audit.list({ afterSeq: 60, limit: 10 }).map((e) => e.seq)).toEqual([
      61, 62, 63, 64, 65, 66, 67, 68, 69, 70,
    ]);
    expect(store.audit.list({ runId: 'run-b' }).map((e) => e.seq)).toEqual([151, 152, 153]);
    expect(store.audit.list({ runId: 'run-a', afterSeq: 149 }).map((e) => e.seq)).toEqual([150, 154, 155]);
    // The version-2 shaped view expands rows into events.
    const view = store.connection
      .prepare(
        'SELECT seq, run_id, prev_hash, hash FROM audit_events WHERE seq IN (64, 65, 151) ORDER BY seq',
      )
      .all();
    expect(view).toEqual(
      [64, 65, 151].map((seq) => {
        const e = events[seq - 1];
        return { seq, run_id: e?.runId, prev_hash: e?.prevHash, hash: e?.hash };
      }),
    );
    // Incremental verification from an event inside a row.
    const mid = events[99] as (typeof events)[number];
    expect(store.audit.verifyChain({ seq: mid.seq, hash: mid.hash })).toMatchObject({ ok: true, count: 55 });
  });

  it('lets a transaction read its own events before they are written as rows', () => {
    const { store } = openTemp();
    store.transaction(() => {
      store.audit.append({ kind: AuditKind.proposed, runId: 'r' });
      store.audit.append({ kind: AuditKind.proposed, runId: 'r' });
      expect(store.audit.head()?.seq).toBe(2);
      expect(store.audit.list({ runId: 'r' })).toHaveLength(2);
      expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });
      store.audit.append({ kind: AuditKind.proposed, runId: 'r' });
    });
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 3 });
  });

  it('names the altered event inside a row, and refuses rows whose parts disagree', () => {
    const altered = openTemp().store;
    grouped(altered);
    tamper(altered, `UPDATE audit_log SET body = replace(body, '{\\"i\\":7}', '{\\"i\\":70}') WHERE seq = 1`);
    expect(altered.audit.verifyChain()).toMatchObject({
      ok: false,
      brokenSeq: 8,
      reason: 'hash_mismatch',
      count: 7,
    });

    const short = openTemp().store;
    grouped(short);
    tamper(short, 'UPDATE audit_log SET hashes = substr(hashes, 1, 64), last_seq = seq + 1 WHERE seq = 151');
    expect(short.audit.verifyChain()).toMatchObject({ ok: false, brokenSeq: 151 });

    const dropped = openTemp().store;
    grouped(dropped);
    // The row's last event removed from body and hashes: the next row no longer follows on.
    tamper(
      dropped,
      `UPDATE audit_log SET body = audit_stored(json_remove(audit_text(body, run_id), '$[#-1]'), run_id), hashes = substr(hashes, 1, 64), last_seq = 152
       WHERE seq = 151`,
    );
    expect(dropped.audit.verifyChain()).toMatchObject({ ok: false, brokenSeq: 154, reason: 'seq_gap' });
  });
});

describe('audit events inside a transaction opened on the raw connection', () => {
  it('are written at once, not held for a commit the store does not see', () => {
    const { store } = openTemp();
    const raw = store.connection.transaction(() => {
      store.audit.append({ kind: AuditKind.proposed, runId: 'r' });
      store.audit.append({ kind: AuditKind.proposed, runId: 'r' });
    });
    raw();
    expect(store.connection.prepare('SELECT count(*) FROM audit_log').pluck().get()).toBe(2);
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 2 });
  });
});
