import { nkeys } from '@nats-io/transport-node';
import { BusError, BusErrorCode } from '../errors.ts';
import type { BusGrant } from './grants.ts';
import { assertActorGrant } from './grants.ts';
import { signJwt, type UserNats } from './jwt.ts';

/** A user's credentials as the client needs them: the JWT (public) and the nkey seed (secret). */
export interface BusUserCredentials {
  readonly jwt: string;
  readonly seed: Uint8Array;
}

/** A minted identity: the credentials plus facts safe to log (public key, name, expiry). */
export interface MintedUser {
  readonly credentials: BusUserCredentials;
  readonly publicKey: string;
  readonly name: string;
  /** Expiry in ms since the epoch, or null. */
  readonly expiresAt: number | null;
  readonly grant: BusGrant;
}

/** Options of {@link BusMinter.mint}. */
export interface MintOptions {
  /** Shown by the server's monitoring and in its violation log lines; 1-128 characters. */
  readonly name: string;
  /** Lifetime; absent means the JWT does not expire (it dies with the per-state-dir account anyway). */
  readonly ttlMs?: number;
}

const NS_PER_MS = 1_000_000;

/**
 * One side of a grant as JWT permissions. An empty allow list means "allow everything" to
 * nats-server, so a grant that allows nothing on a side becomes an explicit deny of `>`.
 */
function jwtPermission(side: BusGrant['pub']): { allow?: string[]; deny: string[] } {
  if (side.allow.length === 0) return { deny: ['>'] };
  return { allow: [...side.allow], deny: [...side.deny] };
}
/** How long a responder may take to answer a request it received. */
const RESPONSE_TTL_MS = 60_000;

/**
 * The gateway's minting of user credentials: every user JWT is signed by the account's signing
 * key (`iss`), names the account (`issuer_account`), and carries exactly the grant's
 * permissions. Each user gets a fresh nkey; its seed exists only in the returned credentials.
 */
export class BusMinter {
  readonly #signing: nkeys.KeyPair;

  constructor(
    signing: nkeys.KeyPair,
    readonly accountPublicKey: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.#signing = signing;
  }

  /** Credentials of the gateway: the only identity that may publish approval decisions. */
  mintGateway(grant: BusGrant, options: MintOptions): MintedUser {
    return this.#mint(grant, options);
  }

  /**
   * Credentials of an actor. Throws `bus_invalid_grant` when the grant would let it publish an
   * approval decision.
   */
  mint(grant: BusGrant, options: MintOptions): MintedUser {
    assertActorGrant(grant);
    return this.#mint(grant, options);
  }

  #mint(grant: BusGrant, options: MintOptions): MintedUser {
    if (options.name.length === 0 || options.name.length > 128) {
      throw new BusError(BusErrorCode.InvalidGrant, 'a bus user name must be 1-128 characters');
    }
    if (options.ttlMs !== undefined && (!Number.isFinite(options.ttlMs) || options.ttlMs <= 0)) {
      throw new BusError(
        BusErrorCode.InvalidGrant,
        'a bus credential lifetime must be a positive number of ms',
      );
    }
    const user = nkeys.createUser();
    const now = this.clock();
    const exp = options.ttlMs === undefined ? undefined : Math.ceil((now + options.ttlMs) / 1000);
    const jwt = signJwt<UserNats>(
      {
        iat: Math.floor(now / 1000),
        ...(exp === undefined ? {} : { exp }),
        sub: user.getPublicKey(),
        name: options.name,
        nats: {
          type: 'user',
          version: 2,
          issuer_account: this.accountPublicKey,
          pub: jwtPermission(grant.pub),
          sub: jwtPermission(grant.sub),
          ...(grant.respond ? { resp: { max: 1, ttl: RESPONSE_TTL_MS * NS_PER_MS } } : {}),
          subs: -1,
          data: -1,
          payload: -1,
        },
      },
      this.#signing,
    );
    return {
      credentials: { jwt, seed: user.getSeed() },
      publicKey: user.getPublicKey(),
      name: options.name,
      expiresAt: exp === undefined ? null : exp * 1000,
      grant,
    };
  }
}
