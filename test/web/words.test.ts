// The words the web app shows: each reason code's headline (one table, policy/reason-text.ts),
// and times as a person reads them (web/src/when.ts). Pure functions, no DOM.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReasonCode } from '../../policy/decision.ts';
import { REASON_TEXT } from '../../policy/explain.ts';
import { reasonText, REASONS } from '../../policy/reason-text.ts';
import { dateTime, duration, expiryText } from '../../web/src/when.ts';
import { runs } from '../support/laws.ts';

describe('reason words', () => {
  it('every reason code has a headline that is a sentence, not the code, and its detail is the one REASON_TEXT gives', () => {
    for (const code of ReasonCode.options) {
      const words = REASONS[code];
      expect(words.headline, code).toMatch(/^[A-Z]/);
      expect(words.headline).not.toContain(code);
      expect(REASON_TEXT[code]).toBe(words.detail);
      expect(reasonText(code)).toBe(words.headline);
    }
    expect(new Set(ReasonCode.options.map((c) => REASONS[c].headline)).size).toBe(ReasonCode.options.length);
  });

  it('ask mode says what kind of call needs approval; an unknown code or risk is shown as it is', () => {
    expect(reasonText('mode_ask', 'write-local')).toBe('Writes need your approval in ask mode');
    expect(reasonText('mode_ask', 'exec')).toBe('Shell commands need your approval in ask mode');
    expect(reasonText('mode_ask', 'external')).toBe(
      'Calls outside this computer need your approval in ask mode',
    );
    expect(reasonText('mode_ask', 'teleport')).toBe(REASONS.mode_ask.headline);
    expect(reasonText('mode_ask', null)).toBe(REASONS.mode_ask.headline);
    // Not a key of the table, even where an object has one.
    for (const odd of ['no_such_code', '__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(reasonText(odd)).toBe(odd);
  });
});

describe('times', () => {
  const at = (iso: string) => new Date(iso).getTime();

  it('an expiry tomorrow shows its date and time, and what is left', () => {
    const now = at('2026-12-06T20:00:00');
    expect(expiryText(at('2026-12-07T20:07:50'), now)).toBe('Mon 7 Dec, 20:07:50 (in 1 d 0 h)');
    expect(expiryText(at('2026-12-06T20:07:50'), now)).toBe('today, 20:07:50 (in 7 min 50 s)');
    expect(expiryText(at('2026-12-06T19:55:00'), now)).toBe('today, 19:55:00 (expired 5 min 00 s ago)');
    expect(dateTime(at('2027-01-02T08:00:00'), now)).toBe('Sat 2 Jan 2027, 08:00:00');
  });

  it('a duration is its two largest units and never negative', () => {
    expect(duration(0)).toBe('0 s');
    expect(duration(12_400)).toBe('12 s');
    expect(duration(65_000)).toBe('1 min 05 s');
    expect(duration((23 * 60 + 12) * 60_000)).toBe('23 h 12 min');
    expect(duration(-5000)).toBe('0 s');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 * 86_400_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (ms, more) => {
          const parts = duration(ms).split(' ');
          expect(parts.length === 2 || parts.length === 4).toBe(true);
          // Longer spans never read as shorter in their largest unit's order.
          const rank = (s: string) => ['s', 'min', 'h', 'd'].indexOf(s.split(' ')[1] as string);
          expect(rank(duration(ms + more))).toBeGreaterThanOrEqual(rank(duration(ms)));
        },
      ),
      { numRuns: runs(100) },
    );
  });
});
