import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LEARNED_SECRETS, MIN_LEARNED_LENGTH, Redactor } from '../../store/redaction/redactor.ts';
import { runs } from '../support/laws.ts';

const VALUE = 'sk-live-7Hq2Lm9Xv4Tz';

describe('the redactor learns values sent under sensitive keys', () => {
  it('scrubs a value seen under api_key when it comes back later in plain text', () => {
    const r = new Redactor();
    expect(r.redact({ args: { api_key: VALUE, url: 'https://x.example/' } })).toEqual({
      args: { api_key: '[REDACTED]', url: 'https://x.example/' },
    });
    expect(r.redactString(`the server said: key ${VALUE} accepted`)).toBe(
      'the server said: key [REDACTED] accepted',
    );
    expect(r.redact({ result: { echoed: [`x${VALUE}y`] } })).toEqual({
      result: { echoed: ['x[REDACTED]y'] },
    });
    // The escaped forms are learned too.
    expect(r.redactString(encodeURIComponent(`${VALUE}/+`))).not.toContain(VALUE);
  });

  it('learns every text leaf of a nested value, numbers included, and survives cycles', () => {
    const r = new Redactor();
    const nested: Record<string, unknown> = { user: 'deploy-bot', parts: ['part-one-xyz', 98765432] };
    nested.self = nested;
    r.redact({ credentials: nested });
    expect(r.redactString('deploy-bot part-one-xyz 98765432')).toBe('[REDACTED] [REDACTED] [REDACTED]');
  });

  it('does not learn under marked keys, short values, the censor text or benign token counters', () => {
    const r = new Redactor({ markedKeys: ['body'] });
    r.redact({ body: 'hello world, a message body', password: 'abc', token: '[REDACTED]' });
    r.redact({ auth: 'none', token_type: 'Bearer', pin: '1234567' });
    expect('1234567').toHaveLength(MIN_LEARNED_LENGTH - 1);
    expect(r.redactString('auth: none, type Bearer, code 1234567')).toBe(
      'auth: none, type Bearer, code 1234567',
    );
    r.redact({ usage: { totalTokens: 123456 } });
    expect(r.redactString('hello world, a message body')).toBe('hello world, a message body');
    expect(r.redactString('abc')).toBe('abc');
    expect(r.redactString('field was [REDACTED] before')).toBe('field was [REDACTED] before');
    expect(r.redactString('used 123456 tokens')).toBe('used 123456 tokens');
    expect(r.secretCount).toBe(0);
  });

  it('can be turned off', () => {
    const r = new Redactor({ learnSensitiveValues: false });
    expect(r.redact({ secret: VALUE })).toEqual({ secret: '[REDACTED]' });
    expect(r.redactString(VALUE)).toBe(VALUE);
  });

  it(`learns at most ${MAX_LEARNED_SECRETS} values, and the same value only once`, () => {
    const r = new Redactor();
    for (let i = 0; i < 3; i++) r.redact({ token: VALUE });
    const once = r.secretCount;
    expect(once).toBeGreaterThan(0);
    for (let i = 0; i < MAX_LEARNED_SECRETS + 10; i++) r.redact({ token: `tok-${i}-abcdef` });
    expect(r.redactString(`tok-${MAX_LEARNED_SECRETS - 2}-abcdef`)).toBe('[REDACTED]');
    expect(r.redactString(`tok-${MAX_LEARNED_SECRETS + 5}-abcdef`)).toBe(
      `tok-${MAX_LEARNED_SECRETS + 5}-abcdef`,
    );
    // The censor by key still holds beyond the limit.
    expect(r.redact({ token: 'beyond-the-limit' })).toEqual({ token: '[REDACTED]' });
  });

  it('property: a value once sent under a sensitive key never survives redaction again, anywhere in text', () => {
    const key = fc.constantFrom(
      'api_key',
      'apiKey',
      'password',
      'x-auth-token',
      'client_secret',
      'Authorization',
    );
    const value = fc
      .string({ minLength: MIN_LEARNED_LENGTH, maxLength: 40 })
      .filter((v) => !v.includes('[REDACTED]') && !'[REDACTED]'.includes(v));
    fc.assert(
      fc.property(key, value, fc.string(), fc.string(), (k, v, before, after) => {
        const r = new Redactor();
        r.redact({ call: { args: { [k]: v } } });
        expect(r.redactString(`${before}${v}${after}`)).not.toContain(v);
        expect(JSON.stringify(r.redact({ result: [`${before}${v}${after}`] }))).not.toContain(
          JSON.stringify(v).slice(1, -1),
        );
      }),
      { numRuns: runs(300) },
    );
  });
});
