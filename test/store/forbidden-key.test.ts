import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_KEYS, findForbiddenKey } from '../../store/json.ts';
import { runs } from '../support/laws.ts';

const RUNS = Number(process.env.SNOTRA_FC_RUNS ?? 300);

/** The plain definition: depth first, last child first, each key of an object in order. */
function reference(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '$']];
  while (stack.length > 0) {
    const [item, path] = stack.pop() as [unknown, string];
    if (item === null || typeof item !== 'object') continue;
    if (Array.isArray(item)) {
      item.forEach((child, i) => stack.push([child, `${path}[${i}]`]));
      continue;
    }
    for (const key of Object.keys(item)) {
      if (FORBIDDEN_KEYS.has(key)) return `${path}.${key}`;
      stack.push([(item as Record<string, unknown>)[key], `${path}.${key}`]);
    }
  }
  return null;
}

/** JSON whose keys are often forbidden ones or look like them, parsed the way stored text is. */
const key = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    '__proto',
    'Constructor',
    'prototypes',
    'a.b',
    '[0]',
  ),
);
const doc = fc
  .letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 1 }),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    ),
  }))
  .value.map((v) => JSON.parse(JSON.stringify(v)) as unknown);

describe('findForbiddenKey', () => {
  it('finds the same key at the same path as the plain definition, for any JSON (fast-check)', () => {
    fc.assert(
      fc.property(doc, (d) => {
        expect(findForbiddenKey(d)).toBe(reference(d));
      }),
      { numRuns: runs(RUNS) },
    );
  });

  it('names the path through arrays and objects, and finds a key parsed from JSON text', () => {
    expect(findForbiddenKey(JSON.parse('{"a":[0,{"b":{"__proto__":{}}}]}'))).toBe('$.a[1].b.__proto__');
    expect(findForbiddenKey([[{ q: { prototype: 2 } }]])).toBe('$[0][0].q.prototype');
    expect(findForbiddenKey({ a: { constructorx: 1, b: [{ c: 'constructor' }] } })).toBeNull();
    expect(findForbiddenKey('constructor')).toBeNull();
    // Deep nesting does not overflow the stack.
    let deep: unknown = { constructor: 1 };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findForbiddenKey(deep)).toMatch(/^\$(\[0\]){100000}\.constructor$/);
  });
});
