import { randomBytes, timingSafeEqual } from 'node:crypto';
import { SidecarError } from './errors.ts';

/** The shortest token accepted from the launcher. */
export const MIN_TOKEN_LENGTH = 32;

/** The launcher's token was unusable; `snotra start` exits 1 with this message. */
export class SidecarTokenError extends Error {
  readonly code = 'sidecar_token_too_short';
}

let held: string | undefined;

/**
 * Holds the launcher's token for `takeSidecarToken`. `bin/snotra.js` removes
 * `SNOTRA_SIDECAR_TOKEN` from the environment before anything else runs (the TypeScript loader
 * starts an esbuild child that would inherit it) and hands the value over here.
 */
export function holdLauncherToken(value: string | undefined): void {
  held = value;
}

/**
 * The sidecar token: `SNOTRA_SIDECAR_TOKEN` when the launcher set it (deleted from the
 * environment at once, so no child inherits it), otherwise 256 random bits. Call before anything
 * spawns a child. The value is never printed, logged or persisted.
 */
export function takeSidecarToken(env: NodeJS.ProcessEnv = process.env): string {
  const given = held ?? env.SNOTRA_SIDECAR_TOKEN;
  held = undefined;
  delete env.SNOTRA_SIDECAR_TOKEN;
  if (given === undefined) return randomBytes(32).toString('base64url');
  if (given.length < MIN_TOKEN_LENGTH) {
    throw new SidecarTokenError(
      `SNOTRA_SIDECAR_TOKEN is ${given.length} characters long; it needs at least ${MIN_TOKEN_LENGTH} (or leave it unset for a random one)`,
    );
  }
  if (!/^[\x21-\x7e]+$/.test(given)) {
    throw new SidecarTokenError('SNOTRA_SIDECAR_TOKEN must be printable ASCII without spaces');
  }
  return given;
}

/** Constant-time comparison of a presented token with the real one (lengths compared first, on equal-length buffers). */
export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(token, 'utf8');
  if (a.length !== b.length) {
    // Still one comparison of equal-length buffers, so a wrong length costs the same.
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(header);
  return m === null ? undefined : m[1];
}

/** The token of `Sec-WebSocket-Protocol: snotra.v1, snotra.token.<token>`, or undefined. */
export function wsTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const parts = header.split(',').map((p) => p.trim());
  if (!parts.includes('snotra.v1')) return undefined;
  const tokens = parts.filter((p) => p.startsWith('snotra.token.'));
  if (tokens.length !== 1) return undefined;
  return (tokens[0] as string).slice('snotra.token.'.length);
}

/** Who may talk to the sidecar: the port it listens on and the extra origins config allows. */
export interface Peers {
  readonly port: number;
  readonly allowedOrigins: readonly string[];
}

/** The Tauri shell's origins (the desktop app); always allowed. */
export const TAURI_ORIGINS = ['tauri://localhost', 'http://tauri.localhost', 'https://tauri.localhost'];

/** Header fields that must appear at most once (Node keeps only the first of a duplicate). */
const SINGLE_FIELDS = new Set(['host', 'authorization']);

/**
 * Refuses a request with more than one `Host` or `Authorization` field line (RFC 9112 §3.2 for
 * Host), counted in `rawHeaders`: Node's `headers` keeps only the first, so a right and a wrong
 * value would otherwise pass in either order; throws 400.
 */
export function checkSingleHeaders(rawHeaders: readonly string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    if (!SINGLE_FIELDS.has(name)) continue;
    if (seen.has(name)) {
      throw new SidecarError(400, 'duplicate_header', `the ${name} header may appear only once`);
    }
    seen.add(name);
  }
}

/** `Host` must name the sidecar itself (a DNS-rebinding name does not); throws 403. */
export function checkHost(host: string | undefined, peers: Peers): void {
  if (host === `127.0.0.1:${peers.port}` || host === `localhost:${peers.port}`) return;
  throw new SidecarError(403, 'bad_host', 'the Host header must be 127.0.0.1:<port> or localhost:<port>');
}

/** Whether an origin is allowed: the sidecar's own, a Tauri one, or one in `sidecar.allowedOrigins`. */
export function originAllowed(origin: string, peers: Peers): boolean {
  return (
    origin === `http://127.0.0.1:${peers.port}` ||
    origin === `http://localhost:${peers.port}` ||
    TAURI_ORIGINS.includes(origin) ||
    peers.allowedOrigins.includes(origin)
  );
}

/** A present `Origin` must be allowed (an absent one is a non-browser client); throws 403. */
export function checkOrigin(origin: string | undefined, peers: Peers): void {
  if (origin === undefined || originAllowed(origin, peers)) return;
  throw new SidecarError(403, 'bad_origin', 'this Origin may not use the sidecar');
}

/** The bearer token must match; throws 401. */
export function checkToken(presented: string | undefined, token: string): void {
  if (!tokenMatches(presented, token)) {
    throw new SidecarError(401, 'unauthorized', 'a valid sidecar token is required');
  }
}
