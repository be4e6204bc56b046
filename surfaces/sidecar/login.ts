import { createHash, randomBytes } from 'node:crypto';

/** How long a login code may be exchanged after it was minted. */
export const LOGIN_CODE_TTL_MS = 60_000;
/** The cookie a login code is exchanged for. */
export const SESSION_COOKIE = 'snotra_session';
/** Codes not yet used, and cookie sessions, kept at most (the oldest goes first). */
export const MAX_LOGIN_CODES = 16;
export const MAX_COOKIE_SESSIONS = 16;
/** The path a login URL opens (`/login?code=…`). */
export const LOGIN_PATH = '/login';

/** Lookups go through a hash, so no comparison runs over the secret itself. */
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest('base64url');

/**
 * The web app's logins of one launch (`snotra open`): single-use codes that live at most
 * `LOGIN_CODE_TTL_MS`, each exchanged for a cookie session bound to this launch (held in memory:
 * a restart forgets every code and session). The launch token is never involved; a code or a
 * session is 256 random bits. Time comes from `now` (a test advances a simulated clock).
 */
export class LoginCodes {
  /** digest(code) → expiry. */
  readonly #codes = new Map<string, number>();
  /** digest(session) in creation order. */
  readonly #sessions = new Set<string>();

  constructor(private readonly now: () => number) {}

  /** A new single-use code. */
  mint(): string {
    const code = randomBytes(32).toString('base64url');
    const at = this.now();
    for (const [k, expiry] of this.#codes) if (expiry <= at) this.#codes.delete(k);
    while (this.#codes.size >= MAX_LOGIN_CODES) this.#codes.delete(this.#codes.keys().next().value as string);
    this.#codes.set(digest(code), at + LOGIN_CODE_TTL_MS);
    return code;
  }

  /**
   * Exchanges a code for a new session value, or null when the code is unknown (another launch,
   * made up), already used or expired. A code is spent by its first use, whatever the outcome.
   */
  exchange(code: string): string | null {
    const key = digest(code);
    const expiry = this.#codes.get(key);
    this.#codes.delete(key);
    if (expiry === undefined || this.now() >= expiry) return null;
    const session = randomBytes(32).toString('base64url');
    while (this.#sessions.size >= MAX_COOKIE_SESSIONS)
      this.#sessions.delete(this.#sessions.values().next().value as string);
    this.#sessions.add(digest(session));
    return session;
  }

  /** Whether a cookie's value is a session of this launch. */
  valid(session: string | undefined): boolean {
    return session !== undefined && session.length > 0 && this.#sessions.has(digest(session));
  }
}

/**
 * The session cookie's value from a `Cookie` header, or undefined when there is none or more
 * than one (a second cookie of the same name, planted for a parent path, is refused, not chosen).
 */
export function sessionCookieOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const values = header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.startsWith(`${SESSION_COOKIE}=`))
    .map((p) => p.slice(SESSION_COOKIE.length + 1));
  return values.length === 1 ? values[0] : undefined;
}

/** The `Set-Cookie` value of a new session: `HttpOnly`, `SameSite=Strict`, for this origin's whole path. */
export function sessionCookie(session: string): string {
  return `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`;
}

/**
 * Whether a request's browser context allows a cookie session: its `Origin`, when present, is
 * exactly the origin its `Host` names (not a Tauri or configured origin: they use the token),
 * and its `Sec-Fetch-Site`, when present, is `same-origin` or `none`. Another port of 127.0.0.1
 * is the same *site*, so `SameSite=Strict` alone would let its pages send the cookie.
 */
export function cookieContextOk(headers: {
  origin?: string | undefined;
  host?: string | undefined;
  'sec-fetch-site'?: string | string[] | undefined;
}): boolean {
  if (headers.origin !== undefined && headers.origin !== `http://${headers.host ?? ''}`) return false;
  const site = headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}
