import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptCurrentEnvelope, parseRunSnapshot, RunStatus } from '../../store/snapshots/format.ts';
import { openTemp } from './helpers.ts';
import { runs } from '../support/laws.ts';

const validId = fc.string({ minLength: 1, maxLength: 256 });
// Valid values weigh most, so most envelopes have just one field wrong (the cases that matter).
const anyId = fc.oneof(
  { arbitrary: validId, weight: 20 },
  fc.constant(''),
  fc.string({ minLength: 257, maxLength: 300 }),
  fc.integer(),
  fc.constant(null),
);
const validTime = fc.integer({ min: 0, max: 8_640_000_000_000_000 });
const anyTime = fc.oneof(
  { arbitrary: validTime, weight: 20 },
  fc.integer({ min: -1000, max: -1 }),
  fc.double(),
  fc.constant(8_640_000_000_000_001),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.constant('5'),
);
/** Plain JSON objects as JSON.parse makes them, some with a forbidden key somewhere. */
const validSnapshot = fc
  .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }))
  .map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);
const anySnapshot = fc.oneof(
  { arbitrary: validSnapshot, weight: 10 },
  fc
    .constantFrom(
      '{"context":{"__proto__":{"admin":true}}}',
      '{"a":[{"constructor":1}]}',
      '{"prototype":null}',
      '[]',
      'null',
      '"text"',
      '7',
    )
    .map((t) => JSON.parse(t) as unknown),
);

const envelope = (g: {
  version: fc.Arbitrary<unknown>;
  id: fc.Arbitrary<unknown>;
  status: fc.Arbitrary<unknown>;
  time: fc.Arbitrary<unknown>;
  snapshot: fc.Arbitrary<unknown>;
}) =>
  fc.record({
    $schemaVersion: g.version,
    runId: g.id,
    agentId: g.id,
    surface: g.id,
    status: g.status,
    parentRunId: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, g.id),
    updatedAt: g.time,
    snapshot: g.snapshot,
  });

describe('snapshot envelope of a current row: one pass', () => {
  it('accepts only what parseRunSnapshot accepts, and returns the same value', () => {
    fc.assert(
      fc.property(
        envelope({
          version: fc.oneof(
            { arbitrary: fc.constant<unknown>(1), weight: 20 },
            fc.constantFrom<unknown>(2, 0, '1', 1.5),
          ),
          id: anyId,
          status: fc.oneof(
            { arbitrary: fc.constantFrom(...RunStatus.options), weight: 20 },
            fc.string({ maxLength: 12 }),
          ),
          time: anyTime,
          snapshot: anySnapshot,
        }),
        (e) => {
          const fast = acceptCurrentEnvelope(e);
          let full: unknown = null;
          try {
            full = parseRunSnapshot(e, 'test');
          } catch {
            full = null;
          }
          // Accepted by the full parse but not here is allowed (the caller falls back to it).
          if (fast !== null) expect(full).toEqual(fast);
        },
      ),
      { numRuns: runs(2000) },
    );
  });

  it('takes the one pass for every envelope this code writes', () => {
    fc.assert(
      fc.property(
        envelope({
          version: fc.constant(1),
          id: validId,
          status: fc.constantFrom(...RunStatus.options),
          time: validTime,
          snapshot: validSnapshot.filter(
            (s) => !JSON.stringify(s).match(/"(__proto__|constructor|prototype)"/),
          ),
        }),
        (e) => {
          expect(acceptCurrentEnvelope(e)).toBe(e);
        },
      ),
      { numRuns: runs(500) },
    );
  });

  it('refuses an envelope with a key the schema does not have', () => {
    const e = {
      $schemaVersion: 1,
      runId: 'r',
      agentId: 'a',
      surface: 's',
      status: 'running',
      parentRunId: null,
      updatedAt: 1,
      snapshot: {},
    };
    expect(acceptCurrentEnvelope(e)).toBe(e);
    const withExtra: typeof e = Object.assign({ extra: 1 }, e);
    expect(acceptCurrentEnvelope(withExtra)).toBeNull();
  });

  it('still refuses a stored row whose columns were altered on disk', () => {
    const { store } = openTemp();
    store.snapshots.put({
      runId: 'r1',
      agentId: 'assistant',
      surface: 'chat',
      status: 'running',
      snapshot: { value: 'idle', context: { n: 1 } },
    });
    expect(store.snapshots.get('r1')).toMatchObject({ runId: 'r1', status: 'running' });
    const alterations: Array<[string, string]> = [
      ["UPDATE run_snapshots SET updated_at = -1 WHERE run_id = 'r1'", 'snapshot_malformed'],
      ["UPDATE run_snapshots SET agent_id = '' WHERE run_id = 'r1'", 'snapshot_malformed'],
      [
        "UPDATE run_snapshots SET parent_run_id = printf('%.300c', 'p') WHERE run_id = 'r1'",
        'snapshot_malformed',
      ],
      ["UPDATE run_snapshots SET status = 'root' WHERE run_id = 'r1'", 'snapshot_malformed'],
      ["UPDATE run_snapshots SET schema_version = 2 WHERE run_id = 'r1'", 'snapshot_version_future'],
    ];
    const db = store.connection;
    const original = db.prepare("SELECT * FROM run_snapshots WHERE run_id = 'r1'").get() as Record<
      string,
      unknown
    >;
    const restore = db.prepare(
      `UPDATE run_snapshots SET updated_at = @updated_at, agent_id = @agent_id, parent_run_id = @parent_run_id,
         status = @status, schema_version = @schema_version WHERE run_id = 'r1'`,
    );
    for (const [sql, code] of alterations) {
      db.prepare(sql).run();
      expect(() => store.snapshots.get('r1'), sql).toThrow(expect.objectContaining({ code }));
      restore.run(original);
      expect(store.snapshots.get('r1'), sql).toMatchObject({ runId: 'r1', agentId: 'assistant' });
    }
  });
});
