import { join } from 'node:path';
import type { nkeys } from '@nats-io/transport-node';
import type { BusCredentials } from '../target.ts';
import { gatewayGrant } from './grants.ts';
import { loadOrCreateBusAuthKeys } from './keys.ts';
import { BusMinter } from './mint.ts';
import { operatorConfigLines, operatorJwts } from './server-config.ts';

/** Everything the embedded server and the runtime need for per-actor auth. */
export interface EmbeddedBusAuth {
  /** Mints actor credentials (the gateway's signing key). */
  readonly minter: BusMinter;
  /** Operator-mode lines for the server config (public JWTs). */
  readonly configLines: readonly string[];
  /** The gateway's own credentials: the runtime's connection, the only publisher of decisions. */
  readonly gateway: BusCredentials;
}

/** `<stateDir>/nats/auth`: the seeds file lives here (folder 0700, file 0600). */
export function busAuthDir(stateDir: string): string {
  return join(stateDir, 'nats', 'auth');
}

/**
 * Per-actor auth for the embedded server of a state dir: loads (or creates on first use) the
 * operator, account, signing and system keys, signs the operator and account JWTs, and mints
 * the gateway's credentials.
 */
export function embeddedBusAuth(stateDir: string, clock: () => number = Date.now): EmbeddedBusAuth {
  const keys = loadOrCreateBusAuthKeys(busAuthDir(stateDir));
  const jwts = operatorJwts(keys, Math.floor(clock() / 1000));
  const minter = new BusMinter(keys.signing, jwts.accountPublicKey, clock);
  const gateway = minter.mintGateway(gatewayGrant(), { name: 'snotra-gateway' });
  return { minter, configLines: operatorConfigLines(jwts), gateway: gateway.credentials };
}

/**
 * Per-actor auth against an existing NATS (cluster mode): the account's signing key comes from a
 * secret reference (resolved by the caller), the server trusts the operator and account JWTs its
 * administrator installed.
 */
export function externalBusAuth(
  signing: nkeys.KeyPair,
  accountPublicKey: string,
  clock: () => number = Date.now,
): { minter: BusMinter; gateway: BusCredentials } {
  const minter = new BusMinter(signing, accountPublicKey, clock);
  return { minter, gateway: minter.mintGateway(gatewayGrant(), { name: 'snotra-gateway' }).credentials };
}
