import type { Redactor } from '../../../store/index.ts';
import { ConfigError } from '../errors.ts';
import type { LoadedConfig } from '../load.ts';
import {
  missingSecretError,
  readReference,
  referenceLabel,
  type SecretReference,
  type SecretStore,
} from '../../secrets/index.ts';
import type { BusCredentials } from '../../bus/target.ts';
import { signingKeyFromSeed } from '../../bus/auth/keys.ts';
import type { BusMinter } from '../../bus/auth/mint.ts';
import { embeddedBusAuth, externalBusAuth } from '../../bus/auth/setup.ts';

/** Per-actor auth of a runtime: the minter, the gateway's credentials, and for the embedded server its config lines. */
export interface RuntimeBusAuth {
  readonly minter: BusMinter;
  readonly gateway: BusCredentials;
  /** Operator-mode lines for the embedded server; null with `bus.url` (that server is configured by its administrator). */
  readonly configLines: readonly string[] | null;
}

/**
 * The per-actor auth of a runtime when `bus.auth` is `"per-actor"`, else null (token auth).
 * Embedded server: keys of the state dir (created on first use). `bus.url`: the account signing
 * key from the secret store (`bus.signingKey`, registered with the redactor) and the account's
 * public key (`bus.account`); `bus.credentials` must then be absent (the gateway's JWT replaces
 * it). A missing or malformed piece is a ConfigError naming the key.
 */
export async function busAuthFromConfig(
  loaded: LoadedConfig,
  secretStore: SecretStore | undefined,
  redactor: Redactor,
): Promise<RuntimeBusAuth | null> {
  const { auth, url, signingKey, account, credentials } = loaded.config.bus;
  const file = loaded.file ?? '(config)';
  if (auth !== 'per-actor') {
    if (signingKey !== undefined || account !== undefined) {
      throw new ConfigError(file, ['bus.signingKey and bus.account need bus.auth "per-actor"']);
    }
    return null;
  }
  if (url === undefined) {
    const e = embeddedBusAuth(loaded.config.stateDir);
    return { minter: e.minter, gateway: e.gateway, configLines: e.configLines };
  }
  const problems: string[] = [];
  if (credentials !== undefined)
    problems.push(
      'bus.credentials: not used with bus.auth "per-actor" (the gateway JWT replaces it); remove it',
    );
  if (signingKey === undefined)
    problems.push('bus.signingKey: required with bus.url and bus.auth "per-actor"');
  if (account === undefined) problems.push('bus.account: required with bus.url and bus.auth "per-actor"');
  if (problems.length > 0) throw new ConfigError(file, problems);
  const ref = signingKey as SecretReference;
  const seed = await readReference(ref, secretStore);
  if (seed === null)
    throw new ConfigError(file, [`bus.signingKey: ${missingSecretError(ref, secretStore).message}`]);
  redactor.registerSecret(seed);
  let signing;
  try {
    signing = signingKeyFromSeed(seed, `bus.signingKey (${referenceLabel(ref)})`);
  } catch (err) {
    throw new ConfigError(file, [(err as Error).message]);
  }
  const ext = externalBusAuth(signing, account as string);
  return { minter: ext.minter, gateway: ext.gateway, configLines: null };
}
