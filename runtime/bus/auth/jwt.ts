import { createHash } from 'node:crypto';
import { nkeys } from '@nats-io/transport-node';

/**
 * The NATS JWT v2 encoding (what `nsc` writes and nats-server 2.2+ verifies): a header
 * `{"typ":"JWT","alg":"ed25519-nkey"}`, the claims, and an ed25519 signature by the issuer's nkey
 * over `header.claims`, each part base64url without padding. Only what the runtime mints is
 * modelled: operator, account and user claims.
 */

/** One side (publish or subscribe) of a user's permissions, as the JWT carries it. */
export interface JwtPermission {
  readonly allow?: readonly string[];
  readonly deny?: readonly string[];
}

/** The `nats` section of an operator JWT. */
export interface OperatorNats {
  readonly type: 'operator';
  readonly version: 2;
  readonly signing_keys?: readonly string[];
  readonly system_account?: string;
}

/** Account limits; -1 is unlimited. JetStream is on for the account when a storage limit is not 0. */
export interface AccountLimits {
  readonly subs: number;
  readonly data: number;
  readonly payload: number;
  readonly imports: number;
  readonly exports: number;
  readonly wildcards: boolean;
  readonly conn: number;
  readonly leaf: number;
  readonly mem_storage: number;
  readonly disk_storage: number;
  readonly streams: number;
  readonly consumer: number;
}

/** The `nats` section of an account JWT. */
export interface AccountNats {
  readonly type: 'account';
  readonly version: 2;
  readonly limits: AccountLimits;
  readonly signing_keys?: readonly string[];
  /** Permissions of a user that carries none: the account's default is to allow nothing. */
  readonly default_permissions?: { readonly pub: JwtPermission; readonly sub: JwtPermission };
}

/** The `nats` section of a user JWT. */
export interface UserNats {
  readonly type: 'user';
  readonly version: 2;
  /** The account's public key when `iss` is one of the account's signing keys. */
  readonly issuer_account?: string;
  readonly pub: JwtPermission;
  readonly sub: JwtPermission;
  /** Lets the user answer requests sent to it (one reply each, within `ttl` nanoseconds). */
  readonly resp?: { readonly max: number; readonly ttl: number };
  readonly subs: number;
  readonly data: number;
  readonly payload: number;
}

/** The registered claims plus one of the `nats` sections. */
export interface JwtClaims<N> {
  /** Unique id: base32 of the SHA-512/256 of the claims without it (as the Go library computes it). */
  readonly jti: string;
  /** Issued at, seconds since the epoch. */
  readonly iat: number;
  /** Expiry, seconds since the epoch; absent means no expiry. */
  readonly exp?: number;
  /** Public nkey of the signer. */
  readonly iss: string;
  /** Public nkey of the subject (the operator, account or user). */
  readonly sub: string;
  readonly name: string;
  readonly nats: N;
}

const HEADER = { typ: 'JWT', alg: 'ed25519-nkey' } as const;

function b64url(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64url');
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, no padding (the jti encoding of the Go JWT library). */
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** What {@link signJwt} needs: the claims without `jti` and `iss` (both derived). */
export type UnsignedClaims<N> = Omit<JwtClaims<N>, 'jti' | 'iss'>;

/**
 * Encodes and signs `claims` with `signer` (its public key becomes `iss`). The signer must hold a
 * seed: an operator key for operator and account JWTs, an account key or one of the account's
 * signing keys for user JWTs.
 */
export function signJwt<N>(claims: UnsignedClaims<N>, signer: nkeys.KeyPair): string {
  const withIss = { jti: '', ...claims, iss: signer.getPublicKey() };
  const jti = base32(createHash('sha512-256').update(JSON.stringify(withIss)).digest());
  const body = { ...withIss, jti };
  const signingInput = `${b64url(JSON.stringify(HEADER))}.${b64url(JSON.stringify(body))}`;
  const sig = signer.sign(new TextEncoder().encode(signingInput));
  return `${signingInput}.${b64url(sig)}`;
}

/** A decoded JWT whose signature was checked against its `iss`. */
export interface DecodedJwt {
  readonly claims: JwtClaims<{ readonly type: string } & Record<string, unknown>>;
}

/**
 * Decodes a JWT and verifies its signature against the public key in `iss`. Throws an Error naming
 * what is wrong (never echoing the token). Does not judge expiry or the issuer's standing: the
 * server does.
 */
export function decodeJwt(jwt: string): DecodedJwt {
  const parts = jwt.split('.');
  if (parts.length !== 3) throw new Error('not a JWT: expected three dot-separated parts');
  const [h, c, s] = parts as [string, string, string];
  let header: unknown;
  let claims: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
  } catch {
    throw new Error('not a JWT: header or claims are not base64url JSON');
  }
  const hd = header as { typ?: unknown; alg?: unknown };
  if (hd.typ !== 'JWT' || hd.alg !== 'ed25519-nkey') throw new Error('unsupported JWT header');
  const cl = claims as { iss?: unknown; nats?: { type?: unknown } };
  if (typeof cl.iss !== 'string' || typeof cl.nats?.type !== 'string') {
    throw new Error('JWT claims lack iss or nats.type');
  }
  let issuer: nkeys.KeyPair;
  try {
    issuer = nkeys.fromPublic(cl.iss);
  } catch {
    throw new Error('JWT issuer is not a public nkey');
  }
  const ok = issuer.verify(new TextEncoder().encode(`${h}.${c}`), Buffer.from(s, 'base64url'));
  if (!ok) throw new Error('JWT signature does not verify against its issuer');
  return { claims: claims as DecodedJwt['claims'] };
}
