import type { BusAuthKeys } from './keys.ts';
import { signJwt, type AccountLimits, type AccountNats, type OperatorNats } from './jwt.ts';

/** Name of the account every runtime connection (gateway and actors) lives in. */
export const RUNTIME_ACCOUNT_NAME = 'snotra';

const UNLIMITED: AccountLimits = {
  subs: -1,
  data: -1,
  payload: -1,
  imports: -1,
  exports: -1,
  wildcards: true,
  conn: -1,
  leaf: -1,
  mem_storage: -1,
  disk_storage: -1,
  streams: -1,
  consumer: -1,
};

const NO_JETSTREAM: AccountLimits = {
  ...UNLIMITED,
  mem_storage: 0,
  disk_storage: 0,
  streams: 0,
  consumer: 0,
};

/** The public JWTs of the operator and the two accounts (nothing secret: the server verifies them). */
export interface OperatorJwts {
  readonly operator: string;
  readonly account: string;
  readonly system: string;
  readonly accountPublicKey: string;
  readonly systemPublicKey: string;
}

/**
 * Signs the operator JWT (self-issued, naming the system account) and the account JWTs (issued by
 * the operator). The runtime account has JetStream on, lists the signing key, and grants nothing
 * by default: a user whose JWT carries no permissions may publish and subscribe to nothing.
 */
export function operatorJwts(keys: BusAuthKeys, nowSeconds: number): OperatorJwts {
  const operatorPub = keys.operator.getPublicKey();
  const operator = signJwt<OperatorNats>(
    {
      iat: nowSeconds,
      sub: operatorPub,
      name: 'snotra-operator',
      nats: { type: 'operator', version: 2, system_account: keys.system.getPublicKey() },
    },
    keys.operator,
  );
  const account = signJwt<AccountNats>(
    {
      iat: nowSeconds,
      sub: keys.account.getPublicKey(),
      name: RUNTIME_ACCOUNT_NAME,
      nats: {
        type: 'account',
        version: 2,
        limits: UNLIMITED,
        signing_keys: [keys.signing.getPublicKey()],
        default_permissions: { pub: { deny: ['>'] }, sub: { deny: ['>'] } },
      },
    },
    keys.operator,
  );
  const system = signJwt<AccountNats>(
    {
      iat: nowSeconds,
      sub: keys.system.getPublicKey(),
      name: 'SYS',
      nats: { type: 'account', version: 2, limits: NO_JETSTREAM },
    },
    keys.operator,
  );
  return {
    operator,
    account,
    system,
    accountPublicKey: keys.account.getPublicKey(),
    systemPublicKey: keys.system.getPublicKey(),
  };
}

/**
 * The auth lines of a nats-server config in operator mode: the operator JWT, the system account,
 * and a memory resolver preloaded with both accounts. JWTs are public; no seed is written here.
 * (Replaces the `authorization { token }` line of the token mode; the auth timeout stays.)
 */
export function operatorConfigLines(jwts: OperatorJwts): string[] {
  return [
    `operator: ${jwts.operator}`,
    `system_account: ${jwts.systemPublicKey}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    `  ${jwts.accountPublicKey}: ${jwts.account}`,
    `  ${jwts.systemPublicKey}: ${jwts.system}`,
    '}',
  ];
}
