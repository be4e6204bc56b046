import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CENSOR, Redactor, createLogger } from '../../store/index.ts';
import { scrubCredentialShapes, scrubEveryShape } from '../../store/redaction/patterns.ts';
import { runs } from '../support/laws.ts';

const C = DEFAULT_CENSOR;

describe('Redactor by key', () => {
  it.each([
    'token',
    'accessToken',
    'refresh_token',
    'password',
    'passwd',
    'secret',
    'clientSecret',
    'Authorization',
    'cookie',
    'set-cookie',
    'api_key',
    'apiKey',
    'API-KEY',
    'x-api-key',
    'private_key',
    'privateKey',
    'credentials',
    'session_key',
    'sessionKey',
    'auth',
  ])('censors the value under %s, whatever it holds', (key) => {
    const r = new Redactor();
    expect(r.redact({ [key]: 'v4lue' })).toEqual({ [key]: C });
    expect(r.redact({ outer: [{ [key]: { nested: 1 } }] })).toEqual({ outer: [{ [key]: C }] });
  });

  it.each(['sessionId', 'author', 'maxTokens', 'totalTokens', 'idempotencyKey', 'tool', 'path', 'keyboard'])(
    'keeps %s, which holds no secret',
    (key) => {
      expect(new Redactor().redact({ [key]: 42 })).toEqual({ [key]: 42 });
    },
  );

  it('censors marked keys such as message bodies and typed browser input', () => {
    const r = new Redactor({ markedKeys: ['body', 'typed_text'] });
    expect(r.redact({ body: 'hello', typedText: 'my card 4111', other: 'x' })).toEqual({
      body: C,
      typedText: C,
      other: 'x',
    });
    r.markKey('note');
    expect(r.redact({ note: 'n' })).toEqual({ note: C });
  });
});

describe('Redactor by value', () => {
  it('scrubs a registered secret as a whole value, inside longer strings and in keys', () => {
    const r = new Redactor();
    r.registerSecret('hunter2-xyz');
    expect(r.redact({ a: 'hunter2-xyz', b: 'pw=hunter2-xyz;', ['k-hunter2-xyz']: 1 })).toEqual({
      a: C,
      b: `pw=${C};`,
      [`k-${C}`]: 1,
    });
  });

  it('scrubs the URL- and JSON-escaped forms of a secret', () => {
    const r = new Redactor();
    r.registerSecret('a b/"c"&d');
    const out = JSON.stringify(r.redact([encodeURIComponent('a b/"c"&d'), JSON.stringify('a b/"c"&d')]));
    expect(out).not.toContain('a b/');
    expect(out).not.toContain(encodeURIComponent('a b/"c"&d'));
  });

  it('scrubs Error messages, stacks, causes and extra fields', () => {
    const r = new Redactor();
    r.registerSecret('sk-live-123456');
    const error = new Error('request failed with key sk-live-123456', {
      cause: new Error('inner sk-live-123456'),
    });
    Object.assign(error, { code: 'E_AUTH', headers: { authorization: 'Bearer sk-live-123456' } });
    const out = r.redact({ error }) as { error: Record<string, unknown> };
    expect(JSON.stringify(out)).not.toContain('sk-live-123456');
    expect(out.error.message).toBe(`request failed with key ${C}`);
    expect(out.error.code).toBe('E_AUTH');
    expect(out.error.headers).toEqual({ authorization: C });
  });

  it('ignores secrets shorter than the minimum, as documented', () => {
    const r = new Redactor();
    expect(r.registerSecret('abc')).toBe(false);
    expect(r.redact('abc abc')).toBe('abc abc');
    expect(new Redactor({ minSecretLength: 2 }).registerSecret('ab')).toBe(true);
  });

  it('fails closed when a replacement would join fragments into a secret again', () => {
    const r = new Redactor({ censor: 'XX' });
    r.registerSecret('XXyy');
    r.registerSecret('zzzz');
    // "zzzz" -> "XX", which followed by "yy" would spell the other secret.
    expect(r.redact('zzzzyy')).toBe('XX');
  });

  it('censors credential shapes in text without registration', () => {
    const r = new Redactor();
    expect(r.redactString('Authorization: Bearer abcdefgh12345678')).not.toContain('abcdefgh12345678');
    expect(r.redactString('https://user:pa55word@example.com/x')).toBe(`https://${C}@example.com/x`);
    expect(r.redactString('https://api.example.com/v1?api_key=zzz123&x=1')).toBe(
      `https://api.example.com/v1?api_key=${C}&x=1`,
    );
    expect(r.redactString('{"password":"hunter22"}')).toBe(`{"password":"${C}"}`);
  });
});

describe('Redactor shape guarantees', () => {
  it('never mutates its input and survives cycles', () => {
    const r = new Redactor();
    r.registerSecret('s3cr3t-value');
    const input: Record<string, unknown> = { a: 's3cr3t-value', list: [1, { password: 'p' }] };
    input.self = input;
    const snapshot = JSON.stringify({ a: input.a, list: input.list });
    const out = r.redact(input) as Record<string, unknown>;
    expect(JSON.stringify({ a: input.a, list: input.list })).toBe(snapshot);
    expect(out.self).toBe('[Circular]');
    expect(out.a).toBe(C);
  });

  it('turns non-JSON values into JSON-compatible data', () => {
    const r = new Redactor();
    const out = r.redact({
      when: new Date(0),
      big: 10n,
      fn: () => 1,
      bin: Buffer.from('secret bytes'),
      map: new Map([['token', 'x']]),
      set: new Set([1, 2]),
      url: new URL('https://u:p4ssw0rd@h.example/'),
    });
    expect(out).toEqual({
      when: '1970-01-01T00:00:00.000Z',
      big: '10',
      bin: '[binary 12 bytes]',
      map: { token: C },
      set: [1, 2],
      url: `https://${C}@h.example/`,
    });
  });

  it('keeps a __proto__ key as data without touching any prototype', () => {
    const out = new Redactor().redact(JSON.parse('{"__proto__":{"polluted":true}}')) as Record<
      string,
      unknown
    >;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
  });

  it('truncates beyond the maximum depth', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 10; i++) deep = [deep];
    expect(JSON.stringify(new Redactor({ maxDepth: 3 }).redact(deep))).toBe('[[["[Truncated]"]]]');
  });
});

describe('createLogger', () => {
  function capture(): { lines: string[]; write: (s: string) => void } {
    const lines: string[] = [];
    return { lines, write: (s: string) => void lines.push(s) };
  }

  it('passes every record, child bindings and errors through the redactor', () => {
    const r = new Redactor();
    const out = capture();
    const logger = createLogger(r, out);
    r.registerSecret('ghp_registeredAfterCreation');
    const child = logger.child({ requestToken: 'abc', note: 'uses ghp_registeredAfterCreation' });
    child.info(
      { password: 'x', nested: { v: 'ghp_registeredAfterCreation' } },
      'msg ghp_registeredAfterCreation',
    );
    child.error(new Error('boom ghp_registeredAfterCreation'));
    const text = out.lines.join('');
    expect(text).not.toContain('ghp_registeredAfterCreation');
    expect(text).not.toContain('"abc"');
    const first = JSON.parse(out.lines[0] as string) as Record<string, unknown>;
    expect(first).toMatchObject({ requestToken: C, password: C, msg: `msg ${C}`, nested: { v: C } });
    expect(out.lines.every((line) => line.endsWith('\n'))).toBe(true);
  });
});

describe('credential-shape pre-check', () => {
  const fragment = fc.constantFrom(
    'bearer ',
    'Basic\t',
    'BEARER',
    'https://',
    'ftp://',
    'user:pa55word@',
    '@',
    '?',
    '&',
    ';',
    '=',
    ':',
    ' : ',
    'token',
    'api_key',
    'Api-Key',
    'PASSWORD',
    'passphrase',
    'private-key',
    'authorization',
    'cookie',
    'sig',
    'auth',
    'credential',
    '"',
    "'",
    ' ',
    '\n',
    'abcdefgh12345678',
    'x',
    'call:run-1:c-2',
  );
  const text = fc.oneof(
    fc
      .array(fc.oneof(fragment, fc.string({ maxLength: 6 })), { maxLength: 12 })
      .map((parts) => parts.join('')),
    fc.string(),
  );

  it('never skips a text that one of the patterns would change', () => {
    let changed = 0;
    fc.assert(
      fc.property(text, (t) => {
        const full = scrubEveryShape(t, C);
        if (full !== t) changed++;
        expect(scrubCredentialShapes(t, C)).toBe(full);
      }),
      { numRuns: runs(5000) },
    );
    // Worth something only if many generated texts hold a credential shape.
    expect(changed).toBeGreaterThan(50);
  });
});
