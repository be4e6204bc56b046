import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUDIT_KINDS, AuditEventInput, fastAuditEventInput } from '../../store/audit/types.ts';
import { BeginCallInput, fastBeginCallInput } from '../../store/ledger/types.ts';
import { runs } from '../support/laws.ts';

class Custom {
  kind = 'proposed';
}

/** Values at and around every boundary the schemas draw, and of every wrong type. */
const edgy = fc.oneof(
  fc.constantFrom(
    '',
    'a',
    'x'.repeat(63),
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(256),
    'x'.repeat(257),
    'x'.repeat(8192),
    'x'.repeat(8193),
    'read',
    'write-local',
    'exec',
    'external',
    'EXEC',
    'read ',
    ...AUDIT_KINDS,
    'Proposed',
    '__proto__',
  ),
  fc.string(),
  fc.constantFrom(0, 1, -1, 1.5, Number.NaN, Infinity, 8_640_000_000_000_000, 8_640_000_000_000_001, 2 ** 53),
  fc.integer(),
  fc.double(),
  fc.constantFrom(null, undefined, true, [], {}, ['read'], new Custom(), Object.create(null) as object),
  fc.anything(),
);

/** Values that usually pass: short ids, enum members, timestamps, null, undefined, data. */
const plausible = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('read', 'exec', ...AUDIT_KINDS, null, undefined, 0, 1_700_000_000_000),
  fc.jsonValue(),
);

/** A valid base input with up to five fields changed, removed or added, or something else entirely. */
function inputs(keys: readonly string[], base: Readonly<Record<string, unknown>>): fc.Arbitrary<unknown> {
  const name = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...keys) },
    { weight: 1, arbitrary: fc.constantFrom('extra', 'constructor', 'toString') },
  );
  const value = fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: edgy });
  const change = fc.tuple(name, value, fc.boolean());
  const record = fc.array(change, { maxLength: 5 }).map((changes) => {
    const out: Record<string, unknown> = { ...base };
    for (const [key, v, remove] of changes) {
      if (remove) delete out[key];
      else out[key] = v;
    }
    return out;
  });
  return fc.oneof(
    { weight: 8, arbitrary: record },
    { weight: 1, arbitrary: edgy },
    {
      weight: 1,
      arbitrary: record.map((r) => Object.assign(Object.create(null) as Record<string, unknown>, r)),
    },
    { weight: 1, arbitrary: record.map((r) => Object.assign(new Custom(), r)) },
  );
}

/** Orders entries as the fixed shape lists its keys. */
function byKey(order: string[]): (a: [string, unknown], b: [string, unknown]) => number {
  return (a, b) => order.indexOf(a[0]) - order.indexOf(b[0]);
}

const cases = [
  {
    name: 'AuditEventInput',
    zod: AuditEventInput,
    fast: fastAuditEventInput,
    keys: Object.keys(AuditEventInput.shape),
    valid: {
      kind: 'started',
      runId: 'run-1',
      callId: 'c',
      risk: 'exec',
      at: 5,
      detail: { a: [1] },
      resource: null,
    },
  },
  {
    name: 'BeginCallInput',
    zod: BeginCallInput,
    fast: fastBeginCallInput,
    keys: Object.keys(BeginCallInput.shape),
    valid: { idempotencyKey: 'k', callId: 'c', tool: 'shell', risk: null, standingApprovalId: undefined },
  },
] as const;

describe('fast parsers of the hot path', () => {
  for (const { name, zod, fast, keys, valid } of cases) {
    it(`${name}: whatever the fast parser accepts, zod accepts with the same output`, () => {
      let accepted = 0;
      fc.assert(
        fc.property(inputs(keys, valid), (input) => {
          const quick = fast.parse(input);
          if (quick === undefined) return;
          accepted++;
          const checked = zod.safeParse(input);
          expect(checked.success).toBe(true);
          if (!checked.success) return;
          // Equal to zod's output, apart from absent fields being present as undefined…
          expect(quick).toEqual(checked.data);
          expect(Object.entries(quick).filter(([, v]) => v !== undefined)).toEqual(
            Object.entries(checked.data)
              .filter(([, v]) => v !== undefined)
              .sort(byKey(Object.keys(quick))),
          );
          // …and always in the one fixed shape, which zod's output is normalized to as well.
          expect(Object.keys(quick)).toEqual(Object.keys(fast.normalize(checked.data as never)));
          expect(quick).not.toBe(input);
        }),
        { numRuns: runs(3000) },
      );
      // The property is only worth something if the fast path is taken often enough.
      expect(accepted).toBeGreaterThan(30);
    });

    it(`${name}: takes the fast path for a well-formed input`, () => {
      const quick = fast.parse(valid);
      expect(quick).toBeDefined();
      expect(quick).toEqual(zod.parse(valid));
    });
  }
});
