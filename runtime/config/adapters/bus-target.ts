import type { Redactor } from '../../../store/index.ts';
import type { BusTarget } from '../../bus/index.ts';
import { ConfigError } from '../errors.ts';
import type { LoadedConfig } from '../load.ts';
import { missingSecretError, readReference, type SecretStore } from '../../secrets/index.ts';

/**
 * The bus of `bus.url` in config, with its credentials resolved by name from the secret store
 * (never written in config), or null for the embedded server.
 */
export async function busTargetFromConfig(
  loaded: LoadedConfig,
  secretStore: SecretStore | undefined,
  redactor: Redactor,
): Promise<BusTarget | null> {
  const { url, credentials } = loaded.config.bus;
  if (url === undefined) return null;
  if (credentials === undefined) return { url };
  const token = await readReference(credentials, secretStore);
  if (token === null) {
    throw new ConfigError(loaded.file ?? '(config)', [
      `bus.credentials: ${missingSecretError(credentials, secretStore).message}`,
    ]);
  }
  redactor.registerSecret(token);
  return { url, credentials: { token } };
}
