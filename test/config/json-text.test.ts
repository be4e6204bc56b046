import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../runtime/config/json-text.ts';
import { runs } from '../support/laws.ts';

/** Whether JSON.parse accepts the text. */
function jsonAccepts(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('config JSON text', () => {
  it('agrees with JSON.parse on every serialized value, and finds no duplicates in it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const parsed = parseJsonText(text);
        expect(parsed.problems).toEqual([]);
        expect(parsed.value).toEqual(JSON.parse(text));
      }),
      { numRuns: runs(500) },
    );
  });

  it('accepts exactly the texts JSON.parse accepts (mutated JSON, random text)', () => {
    const mutated = fc
      .tuple(
        fc.jsonValue(),
        fc.nat(),
        fc.constantFrom('', ',', '}', ']', '"', ':', '\\', '\n', 'x', '-', '0', '\u0001'),
      )
      .map(([value, at, insert]) => {
        const text = JSON.stringify(value);
        const i = text.length === 0 ? 0 : at % text.length;
        return text.slice(0, i) + insert + text.slice(i + (insert === '' ? 1 : 0));
      });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.string()), (text) => {
        let ours = true;
        try {
          parseJsonText(text);
        } catch (err) {
          expect(err).toBeInstanceOf(SyntaxError);
          expect((err as Error).message).toMatch(/^line \d+, column \d+: /);
          ours = false;
        }
        expect(ours).toBe(jsonAccepts(text));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('names each duplicate key by JSON path and position, at any depth', () => {
    const { problems } = parseJsonText('{"a":1,"b":{"c":[{"d":1,"d":2}]},\n "a":3}');
    expect(problems).toEqual([
      'b.c[0].d: duplicate key "d" (line 1, column 25); a later copy would silently replace the earlier one',
      'a: duplicate key "a" (line 2, column 2); a later copy would silently replace the earlier one',
    ]);
    // Escaped spellings of one key are the same key, as JSON.parse sees them.
    expect(parseJsonText('{"rules":[],"rul\\u0065s":[]}').problems).toHaveLength(1);
  });

  it('refuses nesting deeper than 256 levels with a position instead of overflowing the stack', () => {
    expect(() => parseJsonText('['.repeat(100_000))).toThrow(
      /^line 1, column 258: nested deeper than 256 levels$/,
    );
    expect(parseJsonText(`${'['.repeat(200)}${']'.repeat(200)}`).problems).toEqual([]);
  });

  it('reads numbers of any length, as JSON.parse does', () => {
    const long = `{"a":${'9'.repeat(1000)}.5e3,"b":-0.0}`;
    expect(parseJsonText(long).value).toEqual(JSON.parse(long));
    expect(() => parseJsonText('{"a":01}')).toThrow(/line 1, column 7: expected "," or "}", found "1"/);
    expect(() => parseJsonText('{"a":-}')).toThrow(/line 1, column 6: expected a number/);
  });

  it('tolerates a byte order mark at the start', () => {
    expect(parseJsonText('\ufeff{"a":1}').value).toEqual({ a: 1 });
  });
});
