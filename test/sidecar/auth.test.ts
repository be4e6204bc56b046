import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bearerOf,
  checkHost,
  checkOrigin,
  checkSingleHeaders,
  takeSidecarToken,
  tokenMatches,
  wsTokenOf,
} from '../../surfaces/sidecar/auth.ts';
import { runs } from '../support/laws.ts';

const TOKEN = 'T'.repeat(20) + 'abcdefghijklmnopqrstuvwxyz012345';
const peers = { port: 4100, allowedOrigins: ['http://127.0.0.1:5173'] };

describe('sidecar token checks', () => {
  it('law: only the exact token matches (any other string, longer, shorter or one character off, does not)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (other) => {
        expect(tokenMatches(other, TOKEN)).toBe(other === TOKEN);
      }),
      { numRuns: runs(100) },
    );
    fc.assert(
      fc.property(fc.nat({ max: TOKEN.length - 1 }), fc.string({ minLength: 1, maxLength: 1 }), (i, c) => {
        const changed = TOKEN.slice(0, i) + c + TOKEN.slice(i + 1);
        expect(tokenMatches(changed, TOKEN)).toBe(changed === TOKEN);
      }),
      { numRuns: runs(100) },
    );
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(undefined, TOKEN)).toBe(false);
  });

  it('Bearer: exactly one space, case-sensitive scheme, printable token', () => {
    expect(bearerOf(`Bearer ${TOKEN}`)).toBe(TOKEN);
    for (const h of [
      `bearer ${TOKEN}`,
      `Bearer  ${TOKEN}`,
      `Bearer ${TOKEN} `,
      `Basic ${TOKEN}`,
      'Bearer ',
      TOKEN,
    ]) {
      expect(bearerOf(h), h).toBeUndefined();
    }
  });

  it('WebSocket subprotocol: snotra.v1 plus exactly one snotra.token.*', () => {
    expect(wsTokenOf(`snotra.v1, snotra.token.${TOKEN}`)).toBe(TOKEN);
    expect(wsTokenOf(`snotra.token.${TOKEN},snotra.v1`)).toBe(TOKEN);
    expect(wsTokenOf(`snotra.token.${TOKEN}`)).toBeUndefined();
    expect(wsTokenOf(`snotra.v1, snotra.token.${TOKEN}, snotra.token.x`)).toBeUndefined();
    expect(wsTokenOf('snotra.v1')).toBeUndefined();
  });

  it('the launcher token leaves the environment; too short is refused without showing it; unset gives 256 bits', () => {
    const env: NodeJS.ProcessEnv = { SNOTRA_SIDECAR_TOKEN: TOKEN };
    expect(takeSidecarToken(env)).toBe(TOKEN);
    expect('SNOTRA_SIDECAR_TOKEN' in env).toBe(false);
    const short: NodeJS.ProcessEnv = { SNOTRA_SIDECAR_TOKEN: 'x'.repeat(31) };
    expect(() => takeSidecarToken(short)).toThrow(/31 characters long; it needs at least 32/);
    expect('SNOTRA_SIDECAR_TOKEN' in short).toBe(false);
    expect(() => takeSidecarToken({ SNOTRA_SIDECAR_TOKEN: `${'x'.repeat(32)} y` })).toThrow(
      /printable ASCII/,
    );
    const a = takeSidecarToken({});
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(takeSidecarToken({})).not.toBe(a);
  });

  it('Host and Origin: the exact own names only; look-alikes refused', () => {
    expect(() => checkHost('127.0.0.1:4100', peers)).not.toThrow();
    expect(() => checkHost('localhost:4100', peers)).not.toThrow();
    for (const h of [
      undefined,
      '127.0.0.1',
      'localhost',
      '127.0.0.1:41000',
      'localhost.:4100',
      'evil:4100',
      '127.1:4100',
    ]) {
      expect(() => checkHost(h, peers), String(h)).toThrow(
        expect.objectContaining({ status: 403, code: 'bad_host' }),
      );
    }
    for (const o of [
      undefined,
      'http://127.0.0.1:4100',
      'http://localhost:4100',
      'tauri://localhost',
      'http://127.0.0.1:5173',
    ]) {
      expect(() => checkOrigin(o, peers), String(o)).not.toThrow();
    }
    for (const o of [
      'null',
      'http://127.0.0.1:5174',
      'http://127.0.0.1:4100/',
      'https://127.0.0.1:4100',
      'http://localhost:4100.evil',
    ]) {
      expect(() => checkOrigin(o, peers), o).toThrow(
        expect.objectContaining({ status: 403, code: 'bad_origin' }),
      );
    }
  });

  it('duplicate Host or Authorization field lines are refused with 400, in any order and case', () => {
    const dup = expect.objectContaining({ status: 400, code: 'duplicate_header' });
    for (const raw of [
      ['Host', '127.0.0.1:4100', 'Host', 'evil'],
      ['host', 'evil', 'HOST', '127.0.0.1:4100'],
      ['Authorization', 'Bearer a', 'Accept', '*/*', 'authorization', 'Bearer b'],
      ['Authorization', 'Bearer a', 'Authorization', 'Bearer a'],
    ]) {
      expect(() => checkSingleHeaders(raw), JSON.stringify(raw)).toThrow(dup);
    }
    // Look-alikes: one of each, and names that only contain them.
    for (const raw of [
      [],
      ['Host', 'a', 'Authorization', 'b'],
      ['X-Forwarded-Host', 'a', 'Host', 'b', 'Proxy-Authorization', 'c', 'authorization', 'd'],
      ['Accept', 'host', 'Accept', 'authorization'],
    ]) {
      expect(() => checkSingleHeaders(raw), JSON.stringify(raw)).not.toThrow();
    }
  });
});
