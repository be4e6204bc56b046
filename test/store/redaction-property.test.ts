import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CENSOR, Redactor, createLogger } from '../../store/index.ts';
import { FORBIDDEN_KEYS } from '../../store/json.ts';
import { storedBytes } from '../support/stored-bytes.ts';
import { approvalInput, callInput, openTemp } from './helpers.ts';
import { runs } from '../support/laws.ts';

/**
 * Secrets are token-like (≥ 10 characters with a letter and a digit) or arbitrary Unicode text
 * (≥ 8 graphemes). Short or structural strings such as "INTEGER" or "run-1" occur in any
 * SQLite file of this schema whatever was written, so they cannot serve as leak detectors; and
 * a secret inside the censor text is indistinguishable from it (documented on Redactor).
 */
const tokenSecret = fc
  .stringMatching(/^[A-Za-z0-9_+=./-]{10,40}$/)
  .filter((s) => /[A-Za-z]/.test(s) && /[0-9]/.test(s));
const unicodeSecret = fc
  .string({ unit: 'grapheme', minLength: 8, maxLength: 16 })
  .filter((s) => s.trim().length >= 8 && /[^\x20-\x7e]/.test(s));
const secretArb = fc.oneof(tokenSecret, unicodeSecret).filter((s) => !DEFAULT_CENSOR.includes(s));

function payloadArb(secrets: readonly string[]): fc.Arbitrary<unknown> {
  const embedded = fc
    .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(...secrets), fc.string({ maxLength: 6 }))
    .map(([a, s, b]) => `${a}${s}${b}`);
  const key = fc.oneof(fc.string({ maxLength: 8 }), embedded).filter((k) => !FORBIDDEN_KEYS.has(k));
  const { value } = fc.letrec<{
    value: unknown;
    leaf: unknown;
    object: unknown;
    array: unknown;
    error: unknown;
  }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      tie('leaf'),
      tie('object'),
      tie('array'),
      tie('error'),
    ),
    leaf: fc.oneof(embedded, embedded, fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    array: fc.array(tie('value'), { maxLength: 4 }),
    error: fc.tuple(embedded, embedded).map(([m, c]) => new Error(`failed: ${m}`, { cause: new Error(c) })),
  }));
  return value;
}

const scenario = fc.uniqueArray(secretArb, { minLength: 1, maxLength: 4 }).chain((secrets) =>
  fc.record({
    secrets: fc.constant(secrets),
    payload: payloadArb(secrets),
    text: fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...secrets)).map(([a, s]) => `${a}${s}`),
  }),
);

function leaks(bytes: Buffer, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => bytes.includes(Buffer.from(secret, 'utf8')));
}

describe('redaction before persistence', () => {
  it('leaves no byte sequence of any registered secret in the db file, the WAL or the log', () => {
    fc.assert(
      fc.property(scenario, ({ secrets, payload, text }) => {
        const redactor = new Redactor();
        const { store, path, clock } = openTemp({ redactor });
        const logLines: string[] = [];
        const logger = createLogger(redactor, { write: (s: string) => void logLines.push(s) });
        for (const secret of secrets) redactor.registerSecret(secret);

        store.ledger.beginCall(callInput(1, { resource: text, detail: { args: payload } }));
        store.ledger.completeCall('idem-1', payload);
        store.ledger.beginCall(callInput(2));
        store.ledger.failCall('idem-2', new Error(`tool crashed: ${text}`));
        store.audit.append({ kind: 'proposed', resource: text, detail: payload });
        store.approvals.create(
          approvalInput(3, clock.now, 60_000, { args: payload, target: text, resumeCheckpoint: payload }),
        );
        store.sessionApprovals.grant({
          sessionId: 'session-1',
          tool: 'http_request',
          target: text,
          grantedBy: 'alice',
        });
        store.snapshots.put({
          runId: 'run-1',
          agentId: 'assistant',
          surface: 'chat',
          status: 'running',
          snapshot: { context: { payload, note: text } },
        });
        logger.info({ payload }, `model said ${text}`);
        logger.child({ note: text }).error(new Error(`boom ${text}`));

        const wal = `${path}-wal`;
        expect(existsSync(wal)).toBe(true);
        expect(leaks(storedBytes(path), secrets), 'db file').toEqual([]);
        expect(leaks(storedBytes(wal), secrets), 'WAL file').toEqual([]);
        expect(leaks(Buffer.from(logLines.join(''), 'utf8'), secrets), 'log output').toEqual([]);
        store.close();
        expect(leaks(storedBytes(path), secrets), 'db file after checkpoint').toEqual([]);
      }),
      { numRuns: runs(Number(process.env.SNOTRA_FC_RUNS ?? 60)) },
    );
  });

  it('would see a secret written without redaction (the detector works, through the encodings too)', () => {
    const { store, path } = openTemp();
    // One in an audit field where a fragment code splits it, two in a compressed snapshot.
    const secrets = [
      'plain-Secret-42xyz,null,null,tail-9q',
      'snap-Secret-17abc',
      'unicode-Geheimnis-ÄÖÜ-密码',
    ];
    store.audit.append({ kind: 'proposed', runId: 'run-1', resource: secrets[0] });
    store.snapshots.put({
      runId: 'run-1',
      agentId: 'assistant',
      surface: 'chat',
      status: 'waiting_for_approval', // a parked run's row: stored compressed
      snapshot: { context: { note: secrets[1], text: secrets[2] } },
    });
    const raw = Buffer.concat([readFileSync(path), readFileSync(`${path}-wal`)]);
    // The rows are encoded: the raw bytes alone would not show what they hold…
    expect(leaks(raw, secrets)).toEqual([]);
    // …the decoded rows do, in the WAL before the checkpoint and in the file after it.
    expect(leaks(storedBytes(path, `${path}-wal`), secrets)).toEqual(secrets);
    store.close();
    expect(leaks(storedBytes(path), secrets)).toEqual(secrets);
  });
});
