/**
 * The storage conformance spec for run records (issue 30; the habit of LangGraph's
 * checkpoint-validation): what the SQLite store's run snapshots and the cluster's run records on
 * JetStream both keep of a run (`RunRecordBackend`, store/snapshots/run-record-backend.ts),
 * written once and run against every backend. `makeBackend` may hand every test the same
 * backend: each test uses run ids of its own.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunRecordBackend, RunSnapshot, RunStatus } from '../../store/index.ts';
import { runs } from './laws.ts';

const T0 = 1_700_000_000_000;
const STATUSES: readonly RunStatus[] = [
  'running',
  'waiting_for_approval',
  'resuming',
  'completed',
  'failed',
  'denied',
];
const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'denied'];

/** A run's record as a run writes it: its envelope, with a small actor snapshot. */
export function runRecord(runId: string, overrides: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    $schemaVersion: 1,
    runId,
    agentId: 'worker',
    surface: 'scheduled',
    status: 'running',
    parentRunId: null,
    updatedAt: T0,
    snapshot: { status: 'active', value: 'running', context: { step: 0, note: 'summarize notes/today.md' } },
    ...overrides,
  };
}

/** The n-th version of a run's record: another status, another step, a later time. */
function version(runId: string, n: number, status: RunStatus = 'running'): RunSnapshot {
  return runRecord(runId, {
    status,
    updatedAt: T0 + n,
    snapshot: { status: 'active', value: status, context: { step: n } },
  });
}

/** One step of the law. `at`: the revision an update names (the current one, the one before, one never current). */
type Op =
  | { readonly op: 'create'; readonly run: number; readonly n: number; readonly status: RunStatus }
  | {
      readonly op: 'update';
      readonly run: number;
      readonly n: number;
      readonly status: RunStatus;
      readonly at: 'current' | 'stale' | 'never';
    }
  | { readonly op: 'get'; readonly run: number };

/**
 * Runs the run records conformance spec against one backend. `makeBackend` is called once per test.
 */
export function describeRunRecordsConformance(
  name: string,
  makeBackend: () => RunRecordBackend | Promise<RunRecordBackend>,
): void {
  const fresh = (): string => `worker:run-${randomUUID()}`;

  describe(`store conformance: the run records on ${name}`, () => {
    it("creates a run's record and reads back every field it was written with, at its revision", async () => {
      const backend = await makeBackend();
      const id = fresh();
      const record = runRecord(id, { parentRunId: 'lead:run-1' });
      const revision = await backend.create(record);
      expect(revision).toEqual(expect.any(Number));
      expect(revision).toBeGreaterThan(0);
      expect(await backend.get(id)).toEqual({ record, revision });
      expect(await backend.get(`${id}-other`)).toBeNull();
      const ids = await backend.ids();
      expect(ids).toContain(id);
      expect(ids).not.toContain(`${id}-other`);
    });

    it('a second create is refused and the first record stays; of creates at once exactly one wins', async () => {
      const backend = await makeBackend();
      const id = fresh();
      const first = version(id, 1);
      const revision = await backend.create(first);
      // The same run again, with other content and with the very same content: both refused.
      expect(await backend.create(version(id, 2, 'waiting_for_approval'))).toBeNull();
      expect(await backend.create(first)).toBeNull();
      expect(await backend.get(id)).toEqual({ record: first, revision });

      const raced = fresh();
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => backend.create(version(raced, n))));
      const won = results.flatMap((r, i) => (r === null ? [] : [{ revision: r, n: i + 1 }]));
      expect(won, JSON.stringify(results)).toHaveLength(1);
      const winner = won[0] as { revision: number; n: number };
      expect(await backend.get(raced)).toEqual({
        record: version(raced, winner.n),
        revision: winner.revision,
      });
    });

    it('an update at a stale revision (or one never current) is refused and changes nothing', async () => {
      const backend = await makeBackend();
      const id = fresh();
      const r1 = (await backend.create(version(id, 1))) as number;
      const r2 = await backend.update(version(id, 2, 'waiting_for_approval'), r1);
      expect(r2).toEqual(expect.any(Number));
      expect(r2).toBeGreaterThan(r1);
      const current = { record: version(id, 2, 'waiting_for_approval'), revision: r2 };
      for (const [what, at] of [
        ['the revision it replaced', r1],
        ['one past the current', (r2 as number) + 1],
        ['one far past the current', (r2 as number) + 1000],
      ] as const) {
        expect(await backend.update(version(id, 3, 'completed'), at), what).toBeNull();
        expect(await backend.get(id), what).toEqual(current);
      }
      // The same content at the current revision is a write all the same: the revision moves on,
      // and the one it replaced is stale from then on.
      const r3 = await backend.update(current.record, r2 as number);
      expect(r3).toBeGreaterThan(r2 as number);
      expect(await backend.update(version(id, 4, 'resuming'), r2 as number)).toBeNull();
      expect(await backend.get(id)).toEqual({ record: current.record, revision: r3 });

      // A run without a record: an update at any revision writes nothing.
      const absent = fresh();
      for (const at of [1, r1, r3 as number]) expect(await backend.update(version(absent, 1), at)).toBeNull();
      expect(await backend.get(absent)).toBeNull();
      expect(await backend.ids()).not.toContain(absent);
    });

    it('ids are exact: a look-alike id is another run (or none)', async () => {
      const backend = await makeBackend();
      const id = fresh();
      const lookAlikes = [id.toUpperCase(), `${id} `, `${id}:c1`, id.replace('worker:', 'worker/')];
      await backend.create(version(id, 1, 'waiting_for_approval'));
      for (const [i, other] of lookAlikes.entries())
        await backend.create(version(other, 10 + i, 'completed'));
      const mine = await backend.get(id);
      expect(mine?.record).toEqual(version(id, 1, 'waiting_for_approval'));
      for (const [i, other] of lookAlikes.entries())
        expect((await backend.get(other))?.record, JSON.stringify(other)).toEqual(
          version(other, 10 + i, 'completed'),
        );
      // Changing one changes none of the others.
      expect(await backend.update(version(id, 2, 'resuming'), mine?.revision as number)).toEqual(
        expect.any(Number),
      );
      for (const [i, other] of lookAlikes.entries())
        expect((await backend.get(other))?.record, JSON.stringify(other)).toEqual(
          version(other, 10 + i, 'completed'),
        );
      for (const absent of [` ${id}`, `${id}\u0000`, id.slice(0, -1), `${id}-x`]) {
        expect(await backend.get(absent), JSON.stringify(absent)).toBeNull();
      }
      const ids = await backend.ids();
      for (const other of [id, ...lookAlikes]) expect(ids, JSON.stringify(other)).toContain(other);
      expect(ids).not.toContain(id.slice(0, -1));
    });

    it('a terminal status reads back as written, with the whole record', async () => {
      const backend = await makeBackend();
      for (const [i, status] of TERMINAL.entries()) {
        // Ended after running, and written ended from the start (a run taken over as it ended).
        const ran = fresh();
        const r1 = (await backend.create(version(ran, 1))) as number;
        const ended = version(ran, 2 + i, status);
        const r2 = await backend.update(ended, r1);
        expect(await backend.get(ran), status).toEqual({ record: ended, revision: r2 });
        const born = fresh();
        const r = await backend.create(version(born, 1, status));
        expect(await backend.get(born), status).toEqual({ record: version(born, 1, status), revision: r });
        expect(await backend.ids()).toEqual(expect.arrayContaining([ran, born]));
      }
    });

    it('a write with bad input is refused with an error naming the input, and writes nothing', async () => {
      const backend = await makeBackend();
      const id = fresh();
      const bad: Array<[string, (runId: string) => unknown, string, RegExp]> = [
        ['an empty run id', () => runRecord(''), 'snapshot_malformed', /→ at runId/],
        [
          'a status that is none',
          (r) => runRecord(r, { status: 'Completed' as RunStatus }),
          'snapshot_malformed',
          /→ at status/,
        ],
        ['an empty agent id', (r) => runRecord(r, { agentId: '' }), 'snapshot_malformed', /→ at agentId/],
        ['a negative time', (r) => runRecord(r, { updatedAt: -1 }), 'snapshot_malformed', /→ at updatedAt/],
        [
          'a time that is not whole',
          (r) => runRecord(r, { updatedAt: T0 + 0.5 }),
          'snapshot_malformed',
          /→ at updatedAt/,
        ],
        [
          'an actor snapshot that is a list',
          (r) => runRecord(r, { snapshot: [] as unknown as Record<string, unknown> }),
          'snapshot_malformed',
          /→ at snapshot/,
        ],
        [
          'a field of no record',
          (r) => ({ ...runRecord(r), owner: 'node-z' }),
          'snapshot_malformed',
          /"owner"/,
        ],
        [
          'an envelope version from the future',
          (r) => ({ ...runRecord(r), $schemaVersion: 2 }),
          'snapshot_version_future',
          /\$schemaVersion 2/,
        ],
        [
          'a __proto__ key deep in the actor snapshot',
          (r) => ({ ...runRecord(r), snapshot: JSON.parse('{"context":{"__proto__":{"admin":true}}}') }),
          'forbidden_key',
          /snapshot\.context\.__proto__/,
        ],
      ];
      for (const [what, make, code, names] of bad) {
        const record = make(id) as RunSnapshot;
        await expect(backend.create(record), what).rejects.toMatchObject({
          code,
          message: expect.stringMatching(names),
        });
        expect(await backend.get(id), what).toBeNull();
        expect(await backend.get(''), what).toBeNull();
      }
      const r1 = (await backend.create(version(id, 1))) as number;
      const kept = { record: version(id, 1), revision: r1 };
      for (const [what, make, code, names] of bad) {
        await expect(backend.update(make(id) as RunSnapshot, r1), what).rejects.toMatchObject({
          code,
          message: expect.stringMatching(names),
        });
        expect(await backend.get(id), what).toEqual(kept);
      }
      for (const at of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
        await expect(backend.update(version(id, 2), at), String(at)).rejects.toMatchObject({
          code: 'invalid_input',
          message: expect.stringMatching(/revision/),
        });
        expect(await backend.get(id), String(at)).toEqual(kept);
      }
      // The look-alikes that are fine: the words of the refused inputs as plain values.
      const benign = runRecord(id, {
        status: 'denied',
        updatedAt: T0 + 2,
        snapshot: { note: '__proto__ and constructor are words', owner: 'node-z', list: [] },
      });
      const r2 = await backend.update(benign, r1);
      expect(await backend.get(id)).toEqual({ record: benign, revision: r2 });
    });

    it('updates made at once at one revision: exactly one wins, and its record is the one kept', async () => {
      const backend = await makeBackend();
      const id = fresh();
      const r1 = (await backend.create(version(id, 1))) as number;
      const contenders = [2, 3, 4, 5, 6, 7].map((n) => version(id, n, STATUSES[n % STATUSES.length]));
      const results = await Promise.all(contenders.map((c) => backend.update(c, r1)));
      const won = results.flatMap((r, i) => (r === null ? [] : [{ revision: r, record: contenders[i] }]));
      expect(won, JSON.stringify(results)).toHaveLength(1);
      expect(won[0]?.revision).toBeGreaterThan(r1);
      expect(await backend.get(id)).toEqual(won[0]);
    });

    it('law: whatever the creates, updates and reads, the backend answers as a map of records with revisions', async () => {
      const backend = await makeBackend();
      const status = fc.constantFrom(...STATUSES);
      const run = fc.nat(2);
      const n = fc.nat(1000);
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.record({ op: fc.constant('create' as const), run, n, status }),
        fc.record({
          op: fc.constant('update' as const),
          run,
          n,
          status,
          at: fc.constantFrom('current' as const, 'stale' as const, 'never' as const),
        }),
        fc.record({ op: fc.constant('get' as const), run }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
          const base = fresh();
          // Three runs, two of them look-alikes of the first.
          const ids = [base, base.toUpperCase(), `${base} `];
          // The model: each run's record, its revision and the revisions it had before.
          const model = new Map<string, { record: RunSnapshot; revision: number; before: number[] }>();
          for (const [i, o] of ops.entries()) {
            const id = ids[o.run] as string;
            const now = model.get(id);
            const step = `step ${i}: ${JSON.stringify(o)}`;
            if (o.op === 'get') {
              const got = await backend.get(id);
              expect(got, step).toEqual(
                now === undefined ? null : { record: now.record, revision: now.revision },
              );
              continue;
            }
            const record = version(id, o.n, o.status);
            if (o.op === 'create') {
              const r = await backend.create(record);
              if (now !== undefined) expect(r, step).toBeNull();
              else {
                expect(r, step).toEqual(expect.any(Number));
                model.set(id, { record, revision: r as number, before: [] });
              }
              continue;
            }
            const at =
              now === undefined
                ? 1
                : o.at === 'current'
                  ? now.revision
                  : o.at === 'stale'
                    ? (now.before.at(-1) ?? now.revision + 7)
                    : now.revision + 1000;
            const r = await backend.update(record, at);
            if (now === undefined || o.at !== 'current') expect(r, step).toBeNull();
            else {
              expect(r, step).toBeGreaterThan(now.revision);
              model.set(id, { record, revision: r as number, before: [...now.before, now.revision] });
            }
          }
          for (const id of ids) {
            const now = model.get(id);
            expect(await backend.get(id), id).toEqual(
              now === undefined ? null : { record: now.record, revision: now.revision },
            );
          }
          const listed = new Set(await backend.ids());
          for (const id of ids) expect(listed.has(id), JSON.stringify(id)).toBe(model.has(id));
        }),
        { numRuns: runs(20) },
      );
    });
  });
}
