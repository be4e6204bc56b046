/**
 * What a rewind lists as not rewindable (issue 38): the external calls started since the
 * checkpoint, read from the ledger's index of external calls instead of the whole audit log. A law
 * (fast-check): for any mix of calls of every risk, finished or not, and any checkpoint time, the
 * ledger's answer is the audit log's — the calls of risk `external` whose `started` event is at or
 * after the checkpoint, `completed` when a `completed` event follows, else `started`. Calls of
 * other risks and external calls started before the checkpoint are the look-alikes left out. The
 * query is answered by the partial index (migration 19), not by a scan.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { externalEffectsIn, type ExternalEffect } from '../../runtime/control/rewind.ts';
import type { AuditEvent, Store } from '../../store/index.ts';
import { EXTERNAL_SINCE_SQL } from '../../store/ledger/external-calls.ts';
import { openTemp } from '../store/helpers.ts';
import { runs } from '../support/laws.ts';

const RISKS = ['read', 'write-local', 'exec', 'external'] as const;

/** The answer as the audit log gives it (what rewind read before the index). */
function fromAudit(events: readonly AuditEvent[], at: number): ExternalEffect[] {
  const started = events.filter((e) => e.kind === 'started' && e.risk === 'external' && e.at >= at);
  return started.map((s) => ({
    runId: s.runId ?? null,
    callId: s.callId ?? null,
    tool: s.tool ?? 'unknown',
    target: s.resource ?? null,
    at: s.at,
    status: events.some((e) => e.kind === 'completed' && e.runId === s.runId && e.callId === s.callId)
      ? 'completed'
      : 'started',
  }));
}

const byCall = (a: ExternalEffect, b: ExternalEffect) =>
  a.at - b.at || String(a.callId).localeCompare(String(b.callId));

interface CallSpec {
  readonly risk: (typeof RISKS)[number];
  readonly gap: number;
  readonly end: 'completed' | 'failed' | 'open';
}

function record(store: Store, advance: (ms: number) => void, calls: readonly CallSpec[], first = 0): void {
  calls.forEach((c, n) => {
    const i = first + n;
    advance(c.gap);
    const key = `k${String(i).padStart(3, '0')}`;
    store.ledger.beginCall({
      idempotencyKey: key,
      callId: `call-${i}`,
      runId: `agent:run-${i % 3}`,
      tool: c.risk === 'external' ? 'http_request' : 'shell',
      risk: c.risk,
      resource: `https://example.test/${i}`,
    });
    advance(1);
    if (c.end === 'completed') store.ledger.completeCall(key, { ok: true });
    if (c.end === 'failed') store.ledger.failCall(key, { message: 'refused' });
  });
}

describe('the calls a rewind lists as not rewindable', () => {
  it('are the external calls started since the checkpoint, as the audit log has them (law)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            risk: fc.constantFrom(...RISKS),
            gap: fc.integer({ min: 0, max: 50 }),
            end: fc.constantFrom('completed', 'failed', 'open'),
          }),
          { maxLength: 25 },
        ),
        fc.array(fc.integer({ min: -10, max: 1_400 }), { minLength: 1, maxLength: 4 }),
        (calls: CallSpec[], offsets: number[]) => {
          const { store, clock } = openTemp();
          const start = clock.now;
          record(store, (ms) => clock.advance(ms), calls);
          const events = store.audit.list();
          for (const offset of offsets) {
            const at = start + offset;
            const listed = externalEffectsIn(store, at);
            expect([...listed].sort(byCall)).toEqual(fromAudit(events, at).sort(byCall));
            expect(listed.every((e) => e.at >= at)).toBe(true);
          }
          store.close();
        },
      ),
      { numRuns: runs(20) },
    );
  });

  it('leave out the look-alikes: an external call before the checkpoint, writes and shell calls after it', () => {
    const { store, clock } = openTemp();
    record(store, (ms) => clock.advance(ms), [{ risk: 'external', gap: 0, end: 'completed' }]);
    const at = clock.advance(10);
    record(
      store,
      (ms) => clock.advance(ms),
      [
        { risk: 'write-local', gap: 1, end: 'completed' },
        { risk: 'exec', gap: 1, end: 'open' },
        { risk: 'external', gap: 1, end: 'open' },
      ],
      1,
    );
    expect(externalEffectsIn(store, at)).toEqual([
      {
        runId: 'agent:run-0',
        callId: 'call-3',
        tool: 'http_request',
        target: 'https://example.test/3',
        at: at + 5,
        status: 'started',
      },
    ]);
  });

  it('are read through the partial index of external calls, not a scan of the ledger or the log', () => {
    const { store, path } = openTemp();
    expect(externalEffectsIn(store, 0)).toEqual([]);
    const db = new Database(path, { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${EXTERNAL_SINCE_SQL}`).all(0) as { detail: string }[])
        .map((r) => r.detail)
        .join('\n');
      expect(plan).toContain('USING INDEX ledger_calls_external');
      expect(plan).not.toMatch(/SCAN (c|ledger_calls|audit_log)\b/);
    } finally {
      db.close();
    }
  });
});
