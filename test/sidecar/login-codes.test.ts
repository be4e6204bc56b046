import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../runtime/time/simulated-clock.ts';
import {
  cookieContextOk,
  LOGIN_CODE_TTL_MS,
  LoginCodes,
  MAX_COOKIE_SESSIONS,
  MAX_LOGIN_CODES,
  SESSION_COOKIE,
  sessionCookie,
  sessionCookieOf,
} from '../../surfaces/sidecar/login.ts';
import { parseRequest } from '../../surfaces/join/server.ts';
import { runs } from '../support/laws.ts';

describe('snotra open: login codes of one launch', () => {
  it('a code works once: the second exchange is refused, the session it gave stays valid', () => {
    const logins = new LoginCodes(() => 1000);
    const code = logins.mint();
    const session = logins.exchange(code);
    expect(session).not.toBeNull();
    expect(logins.valid(session as string)).toBe(true);
    expect(logins.exchange(code)).toBeNull();
    expect(session).not.toBe(code);
  });

  it('a code expires at 60 s on the simulated clock (59.999 s still works); an expired try spends it', () => {
    const clock = new SimulatedClock(0);
    const logins = new LoginCodes(() => clock.now());
    const early = logins.mint();
    const late = logins.mint();
    clock.advance(LOGIN_CODE_TTL_MS - 1);
    expect(logins.exchange(early)).not.toBeNull();
    clock.advance(1);
    expect(logins.exchange(late)).toBeNull();
    clock.set(0);
    expect(logins.exchange(late)).toBeNull();
  });

  it('a code or a session of another launch is refused, and so is a made-up one (law)', () => {
    const a = new LoginCodes(() => 0);
    const b = new LoginCodes(() => 0);
    const codeOfA = a.mint();
    expect(b.exchange(codeOfA)).toBeNull();
    const sessionOfA = a.exchange(codeOfA) as string;
    expect(b.valid(sessionOfA)).toBe(false);
    // The launch's own codes are never guessed: any other string misses.
    const own = b.mint();
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        fc.pre(s !== own);
        expect(b.exchange(s)).toBeNull();
        expect(b.valid(s)).toBe(false);
      }),
      { numRuns: runs(200) },
    );
    expect(b.valid(undefined)).toBe(false);
    expect(b.valid('')).toBe(false);
    expect(b.exchange(own)).not.toBeNull();
  });

  it('codes and sessions are bounded: the oldest goes first', () => {
    const logins = new LoginCodes(() => 0);
    const first = logins.mint();
    for (let i = 0; i < MAX_LOGIN_CODES; i++) logins.mint();
    expect(logins.exchange(first)).toBeNull();
    const sessions: string[] = [];
    for (let i = 0; i <= MAX_COOKIE_SESSIONS; i++) sessions.push(logins.exchange(logins.mint()) as string);
    expect(logins.valid(sessions[0])).toBe(false);
    expect(logins.valid(sessions[MAX_COOKIE_SESSIONS])).toBe(true);
  });
});

describe('snotra open: the session cookie', () => {
  it('is HttpOnly, SameSite=Strict, for the whole origin, and carries no expiry beyond the launch', () => {
    expect(sessionCookie('abc')).toBe(`${SESSION_COOKIE}=abc; HttpOnly; SameSite=Strict; Path=/`);
  });

  it('is read from the Cookie header only when it appears exactly once', () => {
    expect(sessionCookieOf(`a=1; ${SESSION_COOKIE}=v; b=2`)).toBe('v');
    expect(sessionCookieOf(`${SESSION_COOKIE}=v`)).toBe('v');
    expect(sessionCookieOf(`${SESSION_COOKIE}=v; ${SESSION_COOKIE}=w`)).toBeUndefined();
    expect(sessionCookieOf(`x${SESSION_COOKIE}=v`)).toBeUndefined();
    expect(sessionCookieOf(undefined)).toBeUndefined();
    expect(sessionCookieOf('a=1')).toBeUndefined();
  });

  it('counts only in a same-origin browser context: the Origin its Host names, Sec-Fetch-Site same-origin or none', () => {
    const host = '127.0.0.1:4100';
    expect(cookieContextOk({ host })).toBe(true);
    expect(cookieContextOk({ host, origin: 'http://127.0.0.1:4100', 'sec-fetch-site': 'same-origin' })).toBe(
      true,
    );
    expect(cookieContextOk({ host, 'sec-fetch-site': 'none' })).toBe(true);
    // Evasions: another port of loopback is the same site; localhost vs 127.0.0.1; a Tauri origin.
    for (const origin of [
      'http://127.0.0.1:4101',
      'http://localhost:4100',
      'https://127.0.0.1:4100',
      'tauri://localhost',
      'null',
      'http://127.0.0.1:4100.evil.test',
    ])
      expect(cookieContextOk({ host, origin }), origin).toBe(false);
    for (const site of ['same-site', 'cross-site', 'Same-Origin', ''])
      expect(cookieContextOk({ host, 'sec-fetch-site': site }), site).toBe(false);
  });
});

describe('join socket requests', () => {
  it('a bad line gets an error naming what was wrong, never a throw', () => {
    expect(parseRequest('not json')).toEqual({
      error: { code: 'invalid_request', message: 'join socket: a request line is not JSON' },
    });
    const noAgent = parseRequest(
      JSON.stringify({ v: 1, type: 'submit', req: 1, text: 'hi', unattended: false }),
    );
    expect('error' in noAgent && noAgent.error.message).toMatch(/agent/);
    const extra = parseRequest(JSON.stringify({ v: 1, type: 'hello', req: 1, user: 'root' }));
    expect('error' in extra && extra.error.message).toMatch(/user/);
    const unknown = parseRequest(JSON.stringify({ v: 1, type: 'shutdown', req: 1 }));
    expect('error' in unknown).toBe(true);
    expect(parseRequest(JSON.stringify({ v: 1, type: 'hello', req: 3 }))).toEqual({
      request: { v: 1, type: 'hello', req: 3 },
    });
  });
});
