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
});
