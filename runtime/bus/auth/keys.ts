import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { BusError, BusErrorCode } from '../errors.ts';

/**
 * The key pairs of the decentralized (operator-mode) bus auth. The operator and the account sign
 * JWTs once, when the server config is written; the account signing key mints every user's JWT
 * (the gateway's and each actor's); the system account is the server's own.
 */
export interface BusAuthKeys {
  readonly operator: nkeys.KeyPair;
  readonly account: nkeys.KeyPair;
  /** The account's signing key: the only key the gateway needs to mint user credentials. */
  readonly signing: nkeys.KeyPair;
  readonly system: nkeys.KeyPair;
}

/** The seeds as stored: nkey seed strings (`SO…`, `SA…`). */
interface StoredSeeds {
  readonly v: 1;
  readonly operator: string;
  readonly account: string;
  readonly signing: string;
  readonly system: string;
}

/** Name of the seeds file under `<stateDir>/nats/auth` (mode 0600, folder 0700). */
export const SEEDS_FILE = 'seeds.json';

/** Fresh key pairs. */
export function generateBusAuthKeys(): BusAuthKeys {
  return {
    operator: nkeys.createOperator(),
    account: nkeys.createAccount(),
    signing: nkeys.createAccount(),
    system: nkeys.createAccount(),
  };
}

function seedOf(kp: nkeys.KeyPair): string {
  return new TextDecoder().decode(kp.getSeed());
}

function pairFromSeed(seed: unknown, what: string, prefix: 'O' | 'A', source: string): nkeys.KeyPair {
  if (typeof seed !== 'string' || !seed.startsWith(`S${prefix}`)) {
    throw new BusError(
      BusErrorCode.InvalidAuthKeys,
      `${source}: the ${what} seed is missing or not an ${prefix === 'O' ? 'operator' : 'account'} nkey seed`,
    );
  }
  try {
    return nkeys.fromSeed(new TextEncoder().encode(seed));
  } catch {
    throw new BusError(BusErrorCode.InvalidAuthKeys, `${source}: the ${what} seed is not a valid nkey seed`);
  }
}

/**
 * An account signing key given by the caller (in cluster mode, resolved from a secret reference):
 * checks that it is an account-type nkey seed. Throws `bus_invalid_auth_keys` naming `source`,
 * never echoing the value.
 */
export function signingKeyFromSeed(seed: string, source: string): nkeys.KeyPair {
  return pairFromSeed(seed, 'account signing key', 'A', source);
}

/**
 * Loads the key pairs of a state dir, generating and storing them on first use. The file is
 * created exclusively with mode 0600 (then renamed into place) inside a 0700 folder; a file that
 * group or others can read is refused (`bus_invalid_auth_keys`), as is one that does not parse.
 * The seeds never reach a log line, an error message or a command line.
 */
export function loadOrCreateBusAuthKeys(authDir: string): BusAuthKeys {
  mkdirSync(authDir, { recursive: true, mode: 0o700 });
  chmodSync(authDir, 0o700);
  const file = join(authDir, SEEDS_FILE);
  let text: string | null = null;
  try {
    const st = statSync(file);
    if ((st.mode & 0o077) !== 0) {
      throw new BusError(
        BusErrorCode.InvalidAuthKeys,
        `${file} is readable by group or others (mode ${(st.mode & 0o777).toString(8)}); it must be 0600`,
      );
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof BusError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new BusError(
        BusErrorCode.InvalidAuthKeys,
        `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unknown'})`,
      );
    }
  }
  if (text !== null) {
    let parsed: Partial<StoredSeeds>;
    try {
      parsed = JSON.parse(text) as Partial<StoredSeeds>;
    } catch {
      throw new BusError(BusErrorCode.InvalidAuthKeys, `${file} is not valid JSON`);
    }
    if (parsed === null || typeof parsed !== 'object' || parsed.v !== 1) {
      throw new BusError(BusErrorCode.InvalidAuthKeys, `${file} has an unsupported format (expected v: 1)`);
    }
    return {
      operator: pairFromSeed(parsed.operator, 'operator', 'O', file),
      account: pairFromSeed(parsed.account, 'account', 'A', file),
      signing: pairFromSeed(parsed.signing, 'signing', 'A', file),
      system: pairFromSeed(parsed.system, 'system account', 'A', file),
    };
  }
  const keys = generateBusAuthKeys();
  const stored: StoredSeeds = {
    v: 1,
    operator: seedOf(keys.operator),
    account: seedOf(keys.account),
    signing: seedOf(keys.signing),
    system: seedOf(keys.system),
  };
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(stored)}\n`, { flag: 'wx', mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return keys;
}
