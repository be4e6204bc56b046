import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CENSOR, Redactor } from '../../store/index.ts';
import { HoldBackBuffer } from '../../runtime/streaming/hold-back.ts';
import { runs } from '../support/laws.ts';

/**
 * Secrets and text over a tiny alphabet, so secrets overlap each other and the text often holds
 * them, their prefixes and their suffixes. Lower-case only: no piece of the censor text
 * (`[REDACTED]`) and no credential shape can come out of it.
 */
const secret = fc.stringMatching(/^[abc]{4,9}$/);
const text = fc.stringMatching(/^[abc x]{0,80}$/);

/** Cut points that split `t` into 1..n pieces (possibly empty ones). */
function split(t: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(t.slice(from, p));
    from = p;
  }
  pieces.push(t.slice(from));
  return pieces;
}

function stream(redactor: Redactor, pieces: readonly string[]): { released: string[]; held: number[] } {
  const buffer = new HoldBackBuffer(redactor);
  const released: string[] = [];
  const held: number[] = [];
  for (const piece of pieces) {
    released.push(buffer.push(piece));
    held.push(buffer.held);
  }
  released.push(buffer.flush());
  return { released, held };
}

describe('the redaction hold-back buffer', () => {
  it('law: for any secrets and any split into deltas, what it releases is the whole text redacted, and holds no secret', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secret, { minLength: 1, maxLength: 4 }),
        fc.array(secret, { maxLength: 3 }),
        text,
        fc.array(fc.nat(), { maxLength: 6 }),
        (secrets, planted, base, cuts) => {
          const redactor = new Redactor();
          for (const s of secrets) redactor.registerSecret(s);
          // Plant secrets (configured ones and near misses) into the text, so most cases hold some.
          const whole = [base, ...planted, ...secrets.slice(0, 1)].join('x');
          const { released, held } = stream(redactor, split(whole, cuts));
          const joined = released.join('');
          expect(joined).toBe(redactor.redactString(whole));
          for (const s of secrets) expect(joined).not.toContain(s);
          const longest = Math.max(...secrets.map((s) => s.length));
          for (const h of held) expect(h).toBeLessThanOrEqual(longest - 1);
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('a secret split across 2 to 5 deltas is never released in part', () => {
    const key = 'sk-live-4f9a8b7c6d5e';
    for (let parts = 2; parts <= 5; parts++) {
      const redactor = new Redactor();
      redactor.registerSecret(key);
      const lead = 'Here is what you asked for; the key is ';
      const whole = `${lead}${key} and done`;
      const size = Math.ceil(key.length / parts);
      const pieces = [lead];
      for (let i = 0; i < key.length; i += size) pieces.push(key.slice(i, i + size));
      pieces.push(' and done');
      const { released } = stream(redactor, pieces);
      for (const r of released) expect(r).not.toMatch(/4f9a|sk-live/);
      expect(released.join('')).toBe(`${lead}${DEFAULT_CENSOR} and done`);
      expect(whole).toContain(key);
      // Text well before the secret goes out at once: all but the longest secret's length - 1.
      expect(released[0]).toBe(lead.slice(0, lead.length - (key.length - 1)));
    }
  });

  it('evasion: the JSON-escaped form of a secret, split, is redacted too; a near miss is released as it is', () => {
    const redactor = new Redactor();
    redactor.registerSecret('pa"ss\\word-77');
    const escaped = JSON.stringify('pa"ss\\word-77').slice(1, -1);
    const a = stream(redactor, ['x ', escaped.slice(0, 5), escaped.slice(5), ' y']).released.join('');
    expect(a).toBe(`x ${DEFAULT_CENSOR} y`);
    const nearMiss = 'pa"ss\\word-7';
    const b = stream(redactor, [nearMiss.slice(0, 4), nearMiss.slice(4), '!']).released.join('');
    expect(b).toBe(`${nearMiss}!`);
  });

  it('with no secret registered every delta is released at once', () => {
    const redactor = new Redactor();
    const { released, held } = stream(redactor, ['Hel', 'lo, ', 'world']);
    expect(released).toEqual(['Hel', 'lo, ', 'world', '']);
    expect(held).toEqual([0, 0, 0]);
  });

  it('never releases half of an astral character', () => {
    const redactor = new Redactor();
    redactor.registerSecret('abcd');
    const whole = '😀😀😀😀 ok';
    for (let i = 1; i < whole.length; i++) {
      const { released } = stream(redactor, [whole.slice(0, i), whole.slice(i)]);
      for (const r of released) expect(r).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/u);
      expect(released.join('')).toBe(whole);
    }
  });
});
