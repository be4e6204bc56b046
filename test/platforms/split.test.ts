import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../surfaces/platforms/split.ts';
import { runs } from '../support/laws.ts';

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

describe('splitMessage', () => {
  it('keeps a short text whole and cuts a long one at the limit', () => {
    expect(splitMessage('hello', 4096)).toEqual(['hello']);
    const parts = splitMessage('a'.repeat(9000), 4096);
    expect(parts.map((p) => p.length)).toEqual([4096, 4096, 808]);
  });

  it('never cuts a surrogate pair: the cut moves one unit back', () => {
    const text = `${'a'.repeat(4095)}😀${'b'.repeat(10)}`;
    const parts = splitMessage(text, 4096);
    expect(parts[0]).toBe('a'.repeat(4095));
    expect(parts[1]?.startsWith('😀')).toBe(true);
    expect(parts.join('')).toBe(text);
  });

  it('prefers a paragraph, then a line, then a word boundary in the second half of the window', () => {
    const para = `${'x'.repeat(3000)}\n\n${'y'.repeat(2000)}`;
    expect(splitMessage(para, 4096)[0]).toBe(`${'x'.repeat(3000)}\n\n`);
    const words = `${'w '.repeat(2500)}`;
    const parts = splitMessage(words, 4096);
    expect(parts[0]?.endsWith(' ')).toBe(true);
    // A boundary in the first half is not used (it would make tiny parts).
    const early = `${'x'.repeat(100)} ${'y'.repeat(5000)}`;
    expect(splitMessage(early, 4096)[0]?.length).toBe(4096);
  });

  it('laws: parts fit the limit, join back to the text, and no part starts or ends inside a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('a', ' ', '\n', '😀', 'é', '\u{1F600}'.charAt(0)),
          maxLength: 400,
        }),
        fc.integer({ min: 2, max: 50 }),
        (text, limit) => {
          const parts = splitMessage(text, limit);
          expect(parts.join('')).toBe(text);
          for (const p of parts) {
            expect(p.length).toBeLessThanOrEqual(limit);
            if (parts.length > 1) expect(p.length).toBeGreaterThan(0);
          }
          let at = 0;
          for (const p of parts.slice(0, -1)) {
            at += p.length;
            expect(isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at))).toBe(false);
          }
        },
      ),
      { numRuns: runs(500) },
    );
  });

  it('refuses a limit that cannot hold a surrogate pair', () => {
    expect(() => splitMessage('abc', 1)).toThrow(/at least 2/);
  });
});
