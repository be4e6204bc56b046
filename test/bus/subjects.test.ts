import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSubject, isSubjectPattern, subject, subjectPattern, Wildcard } from '../../runtime/bus/index.ts';
import { runs } from '../support/laws.ts';

const INJECTIONS = [
  'a.b',
  '*',
  '>',
  'a*',
  'a>',
  'a b',
  'a\tb',
  'a\nb',
  '',
  'a\u0000b',
  'a\u200bb',
  'a\u00a0b',
  'x'.repeat(129),
];

/** Tokens from the whole Unicode range, often with an injection character spliced in. */
const token = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20, unit: 'binary' }),
  fc.string({ minLength: 1, maxLength: 20 }),
  fc
    .tuple(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('.', '*', '>', ' ', '\t', '\u2028', '\u3000'),
      fc.string({ maxLength: 8 }),
    )
    .map(([a, b, c]) => a + b + c),
);

describe('subjects', () => {
  it('builds versioned subjects', () => {
    expect(subject('agent', 'assistant', 'inbox')).toBe('snotra.v1.agent.assistant.inbox');
    expect(subject('run', '0b6e4f2a-9c1d-4e3f-8a7b-1c2d3e4f5a6b')).toBe(
      'snotra.v1.run.0b6e4f2a-9c1d-4e3f-8a7b-1c2d3e4f5a6b',
    );
    expect(subjectPattern('agent', Wildcard.One, 'events')).toBe('snotra.v1.agent.*.events');
    expect(subjectPattern('agent', Wildcard.Rest)).toBe('snotra.v1.agent.>');
  });

  it.each(INJECTIONS)('rejects the injection token %j', (token) => {
    expect(() => subject('agent', token, 'inbox')).toThrow(
      expect.objectContaining({ code: 'bus_invalid_subject' }),
    );
  });

  it('rejects misplaced or partial wildcards in patterns and no tokens at all', () => {
    expect(() => subjectPattern('a', Wildcard.Rest, 'b')).toThrow(
      expect.objectContaining({ code: 'bus_invalid_subject' }),
    );
    expect(() => subjectPattern('a*')).toThrow(expect.objectContaining({ code: 'bus_invalid_subject' }));
    expect(() => subject()).toThrow(expect.objectContaining({ code: 'bus_invalid_subject' }));
    expect(() => subject('a', 1 as unknown as string)).toThrow(
      expect.objectContaining({ code: 'bus_invalid_subject' }),
    );
  });

  it('property: a built subject has exactly prefix + n tokens; a token with a separator or wildcard never builds', () => {
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), (tokens) => {
        let built: string | undefined;
        try {
          built = subject(...tokens);
        } catch {
          built = undefined;
        }
        const bad = tokens.some((t) => /[.*>\s]/u.test(t) || /\p{Cc}|\p{Cf}/u.test(t));
        if (bad) return built === undefined;
        return (
          built !== undefined &&
          built.split('.').length === tokens.length + 2 &&
          isSubject(built) &&
          isSubjectPattern(built)
        );
      }),
      { numRuns: runs(500) },
    );
  });

  it('isSubject tells concrete subjects from patterns and foreign subjects', () => {
    expect(isSubject('snotra.v1.a.b')).toBe(true);
    expect(isSubject('snotra.v1.a.*')).toBe(false);
    expect(isSubject('snotra.v2.a')).toBe(false);
    expect(isSubject('snotra.v1.')).toBe(false);
    expect(isSubjectPattern('snotra.v1.a.*.c.>')).toBe(true);
    expect(isSubjectPattern('snotra.v1.>.a')).toBe(false);
  });
});
