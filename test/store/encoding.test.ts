import { deflateRawSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventBody } from '../../store/audit/chain.ts';
import type { HashedFields } from '../../store/audit/chain.ts';
import { FRAGMENTS, auditDecodeSql, decodeAuditBody, encodeAuditBody } from '../../store/audit/encoding.ts';
import { decodeText, encodeText } from '../../store/codec.ts';
import { SNAPSHOT_DICTIONARY } from '../../store/snapshots/dictionary.ts';
import { findForbiddenKey } from '../../store/json.ts';
import { SNAPSHOT_CODEC } from '../../store/snapshots/encoding.ts';
import { openTemp } from './helpers.ts';
import { runs } from '../support/laws.ts';

const RUNS = Number(process.env.SNOTRA_FC_RUNS ?? 200);

/** Any string, fragments and control characters included (they must survive as content). */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...FRAGMENTS, '\u0001', '\u001f', 'run-1', '\\"', '"'),
  fc
    .array(fc.constantFrom(...FRAGMENTS, 'run-1', 'x', '\u0005'), { maxLength: 6 })
    .map((parts) => parts.join('')),
);
const nullableText = fc.option(text, { nil: null });

/** The hashed fields of an event: any ids, any detail. */
const fields = fc
  .record({
    seq: fc.integer({ min: 1, max: 1e9 }),
    at: fc.integer({ min: 0, max: 8.64e15 }),
    kind: text,
    ids: fc.array(nullableText, { minLength: 11, maxLength: 11 }),
    detail: fc.jsonValue(),
  })
  .map(
    ({ seq, at, kind, ids, detail }): HashedFields =>
      [1, seq, at, kind, ...ids, JSON.stringify(detail) ?? 'null'] as unknown as HashedFields,
  );

describe('audit row encoding (schema version 8)', () => {
  it('gives back the exact text of any row, in JS and in plain SQL, whatever its run id', () => {
    const db = new Database(':memory:');
    const sql = db
      .prepare(
        `WITH ${auditDecodeSql('SELECT 1 AS seq, 1 AS last_seq, ? AS run_id, ? AS body, NULL AS hashes')}
         SELECT body FROM audit_decoded`,
      )
      .pluck();
    fc.assert(
      fc.property(fc.array(fields, { minLength: 1, maxLength: 4 }), nullableText, (events, runId) => {
        const body = `[${events.map(eventBody).join(',')}]`;
        const stored = encodeAuditBody(body, runId);
        expect(decodeAuditBody(stored, runId)).toBe(body);
        expect(sql.get(runId, stored)).toBe(body);
      }),
      { numRuns: runs(RUNS) },
    );
    db.close();
  });

  it('shrinks a typical row and leaves a body without codes (versions 3–7) as it is', () => {
    const body =
      '[[1,2,1700000000002,"policy_decided","session:1","assistant","cli","assistant:m-1","c1","write_file",' +
      '"write-local","mode.ask","/w/a.txt","approval-required",null,"{\\"reason\\":\\"mode_ask\\",\\"ruleSource\\":' +
      '\\"mode\\",\\"step\\":5,\\"humanRequired\\":true,\\"targets\\":[]}"]]';
    const stored = encodeAuditBody(body, 'assistant:m-1');
    expect(stored.length).toBeLessThan(body.length * 0.6);
    expect(stored).not.toContain('assistant:m-1');
    expect(decodeAuditBody(body, 'assistant:m-1')).toBe(body);
  });

  it('keeps a code its row cannot explain, so a tampered row does not parse', () => {
    const stored = encodeAuditBody('[[1,1,0,"proposed","r-77"]]', 'r-77');
    expect(stored).toContain('\u001f');
    expect(() => JSON.parse(decodeAuditBody(stored, null))).toThrow();
  });

  it('pins the frozen fragments and dictionary (stored rows decode only with these exact bytes)', () => {
    const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
    expect(FRAGMENTS).toHaveLength(30);
    for (const fragment of FRAGMENTS) expect([...fragment].every((c) => c.charCodeAt(0) >= 0x20)).toBe(true);
    expect(sha(FRAGMENTS.join('\n'))).toBe(
      'ccc62a04f33e22dae84e83500e347525f1b811752901780c4b4eb57928f409a0',
    );
    expect(sha(SNAPSHOT_DICTIONARY)).toBe('61598f70526e138b7f6e95d8167116121580ea8113f8c87447b21aa8574efa08');
  });
});

describe('snapshot payload encoding (schema version 8)', () => {
  it('round-trips the JSON text of any value, byte for byte', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = JSON.stringify(value) ?? 'null';
        expect(decodeText(SNAPSHOT_CODEC, encodeText(SNAPSHOT_CODEC, json))).toBe(json);
      }),
      { numRuns: runs(RUNS) },
    );
  });

  it('round-trips texts on both sides of the small-window size, and reads blobs of the 32 KiB window', () => {
    // Dictionary + text up to 8 KiB are deflated with an 8 KiB window, longer ones with 32 KiB;
    // both decode with the one inflate setting, and so do blobs written before the small window.
    const limit = 8192 - SNAPSHOT_CODEC.dictionary.length;
    const sample = JSON.stringify({ context: { transcript: [{ role: 'user', text: 'x'.repeat(9000) }] } });
    fc.assert(
      fc.property(
        fc.integer({ min: limit - 64, max: limit + 64 }),
        fc.integer({ min: 0, max: 5000 }),
        (n, at) => {
          const text = (sample.slice(at) + sample).slice(0, n);
          expect(decodeText(SNAPSHOT_CODEC, encodeText(SNAPSHOT_CODEC, text))).toBe(text);
          const wide = deflateRawSync(Buffer.from(text), {
            level: 6,
            windowBits: 15,
            memLevel: 8,
            dictionary: SNAPSHOT_CODEC.dictionary,
          });
          expect(decodeText(SNAPSHOT_CODEC, Buffer.concat([Buffer.of(SNAPSHOT_CODEC.tag), wide]))).toBe(text);
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('stores text over the codec limit plain, and decodes it', () => {
    const small = { ...SNAPSHOT_CODEC, maxBytes: 8 };
    const stored = encodeText(small, '{"a":"long text"}');
    expect(stored[0]).toBe(0);
    expect(decodeText(small, stored)).toBe('{"a":"long text"}');
  });
});

describe('through the store', () => {
  it('reads back any event and any snapshot as written (after redaction), and the chain verifies', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            runId: fc.option(fc.constantFrom('run-1', 'run-2', 'r', 'x"y', 'r\u0003'), { nil: null }),
            resource: nullableText,
            detail: fc.jsonValue(),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc
          .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 5 })
          // The store refuses a snapshot with a forbidden key at any depth (its own tests show it).
          .filter((d) => findForbiddenKey(d) === null),
        fc.constantFrom(
          'running',
          'waiting_for_approval',
          'completed',
          'failed',
          'denied',
          'resuming' as const,
        ),
        (events, snapshot, status) => {
          const { store, redactor } = openTemp();
          store.transaction(() => {
            for (const e of events) store.audit.append({ kind: 'proposed', ...e });
          });
          const read = store.audit.list();
          expect(read.map((e) => e.runId)).toEqual(events.map((e) => e.runId));
          expect(read.map((e) => e.resource)).toEqual(
            events.map((e) => (e.resource === null ? null : redactor.redactString(e.resource))),
          );
          expect(read.map((e) => e.detail)).toEqual(
            events.map((e) => JSON.parse(JSON.stringify(redactor.redact(e.detail ?? null)) ?? 'null')),
          );
          expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: events.length });
          // The plain-SQL view decodes the same events.
          const view = store.connection
            .prepare('SELECT seq, hash, detail FROM audit_events ORDER BY seq')
            .all();
          expect(view).toEqual(
            read.map((e) => ({ seq: e.seq, hash: e.hash, detail: JSON.stringify(e.detail) })),
          );

          const put = store.snapshots.put({
            runId: 'run-1',
            agentId: 'a',
            surface: 'cli',
            status,
            snapshot,
          });
          expect(store.snapshots.get('run-1')).toEqual(JSON.parse(JSON.stringify(put)));
          store.close();
        },
      ),
      { numRuns: runs(Math.min(RUNS, 60)) },
    );
  });
});
