import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorPayload, toObservation } from '../../actors/tools/observation.ts';
import { ToolError } from '../../actors/tools/types.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { runs } from '../support/laws.ts';

const identity = { redact: (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown };

describe('toObservation', () => {
  it('passes small results through as JSON', () => {
    expect(toObservation({ ok: true, result: { a: 1 } }, identity)).toEqual({
      ok: true,
      content: '{"a":1}',
      truncated: false,
      originalBytes: 7,
    });
  });

  it('shapes errors: ToolError code, message and details; other errors tool_failed; no stack', () => {
    const tool = new ToolError('command_failed', 'exit 3', { details: { stderr: 'boom' } });
    expect(errorPayload(tool)).toEqual({
      error: { code: 'command_failed', message: 'exit 3', details: { stderr: 'boom' } },
    });
    expect(errorPayload(new Error('plain'))).toEqual({ error: { code: 'tool_failed', message: 'plain' } });
    const coded = Object.assign(new Error('x'), { code: 'secret_not_found' });
    expect(errorPayload(coded).error.code).toBe('secret_not_found');
    expect(toObservation({ ok: false, error: tool }, identity).content).not.toContain('at ');
  });

  it('caps long strings inside the payload and keeps valid JSON', () => {
    const result = { stdout: 'x'.repeat(200_000), exitCode: 0 };
    const obs = toObservation({ ok: true, result }, identity, { maxBytes: 4096 });
    expect(obs.truncated).toBe(true);
    expect(Buffer.byteLength(obs.content)).toBeLessThanOrEqual(4096);
    const parsed = JSON.parse(obs.content) as { stdout: string; exitCode: number };
    expect(parsed.exitCode).toBe(0);
    expect(parsed.stdout).toMatch(/…\[truncated \d+ chars\]$/);
  });

  it('cuts the text itself when shrinking strings is not enough', () => {
    const result = Array.from({ length: 5000 }, (_, i) => `item ${i}`);
    const obs = toObservation({ ok: true, result }, identity, { maxBytes: 2000 });
    expect(obs.truncated).toBe(true);
    expect(Buffer.byteLength(obs.content)).toBeLessThanOrEqual(2000);
    expect(obs.content).toMatch(/…\[truncated: showing \d+ of \d+ bytes\]$/);
  });

  it('never exceeds the cap, for any payload (multi-byte text included)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 200, max: 3000 }), (value, maxBytes) => {
        const obs = toObservation({ ok: true, result: value }, identity, { maxBytes });
        expect(Buffer.byteLength(obs.content)).toBeLessThanOrEqual(maxBytes);
      }),
      { numRuns: runs(200) },
    );
  });

  it('redacts before capping: a registered secret never appears, not even cut in half', () => {
    const redactor = new Redactor();
    const secret = 'S3CRET-VALUE-0123456789';
    redactor.registerSecret(secret);
    const error = new ToolError('command_failed', `failed with ${secret}`, {
      details: { stderr: `${'y'.repeat(5000)} ${secret} ${'z'.repeat(5000)}`, env: { API_TOKEN: secret } },
    });
    for (const maxBytes of [300, 1000, 5020, 64 * 1024]) {
      const obs = toObservation({ ok: false, error }, redactor, { maxBytes });
      expect(obs.content).not.toContain(secret);
      expect(obs.content).not.toContain('S3CRET-VALUE');
    }
  });
  it('law: within budget, and at least 90% of the budget is content when the payload is larger', () => {
    // A large string is a short random seed repeated (any Unicode, escapes and surrogates too).
    const big = fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }), fc.integer({ min: 1, max: 200_000 }))
      .map(([seed, n]) => seed.repeat(Math.ceil(n / seed.length)));
    const small = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.boolean(), fc.constant(null));
    const payload = fc.oneof(
      big,
      fc.record({ path: small, content: big, startLine: fc.integer(), truncated: fc.boolean() }),
      // An MCP tool result: text blocks.
      fc
        .array(big, { minLength: 1, maxLength: 3 })
        .map((texts) => ({ content: texts.map((text) => ({ type: 'text', text })) })),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(big, small), { maxKeys: 4 }),
    );
    fc.assert(
      fc.property(payload, fc.integer({ min: 4096, max: 64 * 1024 }), (result, maxBytes) => {
        const obs = toObservation({ ok: true, result }, identity, { maxBytes });
        const size = Buffer.byteLength(obs.content);
        expect(size).toBeLessThanOrEqual(maxBytes);
        if (obs.originalBytes <= maxBytes) return;
        const content = obs.content
          .replace(/…\[truncated \d+ chars\]/g, '')
          .replace(/…\[truncated: showing \d+ of \d+ bytes\]$/, '');
        expect(Buffer.byteLength(content)).toBeGreaterThanOrEqual(0.9 * maxBytes);
      }),
      { numRuns: runs(60) },
    );
  });

  it('a large file read keeps a prefix of its text that fills the budget', () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}: "quoted" \\ tab\there`).join('\n');
    const result = { path: '/w/big.log', content: text, startLine: 1, endLine: 20_000, truncated: false };
    const obs = toObservation({ ok: true, result }, identity);
    expect(obs.truncated).toBe(true);
    expect(Buffer.byteLength(obs.content)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(obs.content)).toBeGreaterThan(0.98 * 64 * 1024);
    const parsed = JSON.parse(obs.content) as { content: string; path: string };
    expect(parsed.path).toBe('/w/big.log');
    const kept = parsed.content.replace(/…\[truncated (\d+) chars\]$/, '');
    expect(text.startsWith(kept)).toBe(true);
    expect(parsed.content).toContain(`…[truncated ${text.length - kept.length} chars]`);
  });
});
