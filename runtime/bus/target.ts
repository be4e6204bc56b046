import { z } from 'zod';
import { BusError, BusErrorCode } from './errors.ts';

/** Credentials for a NATS server, as resolved values (the caller resolves secret references). */
export type BusCredentials =
  | { readonly token: string }
  | { readonly user: string; readonly pass: string }
  /** A NATS user JWT and its nkey seed (decentralized auth; see `runtime/bus/auth`). */
  | { readonly jwt: string; readonly seed: Uint8Array };

/**
 * Where to connect: the embedded server (`EmbeddedNats.target()`) or a configured `bus.url` with
 * credentials for an existing NATS. Each URL is `nats://host:port` or `tls://host:port`.
 */
export interface BusTarget {
  readonly url: string | readonly string[];
  readonly credentials?: BusCredentials;
}

const Credentials = z.union([
  z.strictObject({ token: z.string().min(1) }),
  z.strictObject({ user: z.string().min(1), pass: z.string().min(1) }),
  z.strictObject({ jwt: z.string().min(1), seed: z.instanceof(Uint8Array).refine((s) => s.length > 0) }),
]);

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A {@link BusTarget} after validation: URLs as a list, and whether any credential would cross a network in clear. */
export interface CheckedTarget {
  readonly servers: string[];
  readonly credentials?: BusCredentials;
  /** True when credentials go to a non-loopback host over plain `nats://`. */
  readonly cleartextRemote: boolean;
}

/**
 * Validates a target. Throws `bus_invalid_target` for an unparsable URL, a scheme other than
 * `nats:`/`tls:`, credentials embedded in the URL (they would leak into logs and errors), or a
 * malformed credentials object. Error messages never include credential values.
 */
export function checkTarget(target: BusTarget): CheckedTarget {
  const urls = typeof target.url === 'string' ? [target.url] : [...target.url];
  if (urls.length === 0) throw new BusError(BusErrorCode.InvalidTarget, 'no bus URL given');
  let cleartextRemote = false;
  for (const [i, u] of urls.entries()) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw new BusError(BusErrorCode.InvalidTarget, `bus URL #${i + 1} is not a valid URL`);
    }
    if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') {
      throw new BusError(BusErrorCode.InvalidTarget, `bus URL #${i + 1} must use nats:// or tls://`);
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw new BusError(
        BusErrorCode.InvalidTarget,
        `bus URL #${i + 1} embeds credentials; pass them as bus.credentials instead`,
      );
    }
    if (parsed.hostname === '' || parsed.pathname.length > 1 || parsed.search !== '' || parsed.hash !== '') {
      throw new BusError(BusErrorCode.InvalidTarget, `bus URL #${i + 1} must be just scheme://host:port`);
    }
    if (parsed.protocol === 'nats:' && !LOOPBACK.has(parsed.hostname)) cleartextRemote = true;
  }
  if (target.credentials === undefined) return { servers: urls, cleartextRemote: false };
  const creds = Credentials.safeParse(target.credentials);
  if (!creds.success) {
    throw new BusError(
      BusErrorCode.InvalidTarget,
      'bus credentials must be { token }, { user, pass } or { jwt, seed } with non-empty values',
    );
  }
  return { servers: urls, credentials: creds.data, cleartextRemote };
}
