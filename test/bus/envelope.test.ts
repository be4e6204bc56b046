import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEnvelope, defineKinds, encodeEnvelope, InvalidReason } from '../../runtime/bus/index.ts';
import { LogThrottle } from '../../runtime/bus/stats.ts';
import { runs } from '../support/laws.ts';

const kinds = defineKinds({ 'chat.message': z.strictObject({ text: z.string() }) });
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('envelopes', () => {
  it('encode → decode round-trips and stamps version, id, time and source', () => {
    const enc = encodeEnvelope(kinds, 'chat.message', { text: 'hi' }, 'runtime');
    const dec = decodeEnvelope(bytes(enc.json), kinds, 1024);
    expect(dec).toEqual({ ok: true, envelope: enc.envelope });
    expect(enc.envelope).toMatchObject({ v: 1, kind: 'chat.message', source: 'runtime' });
    expect(enc.bytes).toBe(Buffer.byteLength(enc.json));
  });

  it('maps each defect to its reason', () => {
    const base = {
      v: 1,
      id: 'a',
      kind: 'chat.message',
      ts: '2026-01-01T00:00:00.000Z',
      source: 's',
      payload: { text: 'x' },
    };
    const reason = (data: unknown, max = 1024, accept?: Set<string>) => {
      const r = decodeEnvelope(
        typeof data === 'string' ? bytes(data) : bytes(JSON.stringify(data)),
        kinds,
        max,
        accept,
      );
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason(base)).toBe('ok');
    expect(reason('nope')).toBe(InvalidReason.InvalidJson);
    expect(reason('null')).toBe(InvalidReason.InvalidEnvelope);
    expect(reason({ ...base, v: 2 })).toBe(InvalidReason.UnsupportedVersion);
    expect(reason({ ...base, v: '1' })).toBe(InvalidReason.UnsupportedVersion);
    expect(reason({ ...base, v: undefined })).toBe(InvalidReason.InvalidEnvelope);
    expect(reason({ ...base, id: '' })).toBe(InvalidReason.InvalidEnvelope);
    expect(reason({ ...base, kind: 'x.y' })).toBe(InvalidReason.UnknownKind);
    expect(reason(base, 1024, new Set(['bus.error']))).toBe(InvalidReason.UnexpectedKind);
    expect(reason({ ...base, payload: { text: 1 } })).toBe(InvalidReason.InvalidPayload);
    expect(reason(base, 50)).toBe(InvalidReason.Oversized);
  });

  it('property: decoding arbitrary bytes never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), fc.json().map(bytes)), (data) => {
        const r = decodeEnvelope(data, kinds, 150);
        return r.ok === false || r.envelope.v === 1;
      }),
      { numRuns: runs(1000) },
    );
  });

  it('refuses to register malformed or reserved kind names', () => {
    expect(() => defineKinds({ 'Bad Name': z.string() })).toThrow(
      expect.objectContaining({ code: 'bus_invalid_kind' }),
    );
    expect(() => defineKinds({ 'bus.custom': z.string() })).toThrow(
      expect.objectContaining({ code: 'bus_invalid_kind' }),
    );
    expect(kinds.names).toEqual(['bus.error', 'chat.message']);
  });
});

describe('log throttle', () => {
  it('admits a burst per window and reports what it suppressed', () => {
    let now = 0;
    const t = new LogThrottle(2, 1000, () => now);
    expect(t.admit('a')).toEqual({ suppressed: 0 });
    expect(t.admit('a')).toEqual({ suppressed: 0 });
    expect(t.admit('a')).toBeNull();
    expect(t.admit('a')).toBeNull();
    expect(t.admit('b')).toEqual({ suppressed: 0 });
    now = 1000;
    expect(t.admit('a')).toEqual({ suppressed: 2 });
  });
});
