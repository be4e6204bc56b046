import type { Redactor } from '../../store/index.ts';
import { ConfigError } from '../config/errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import { missingSecretError, readReference, referenceLabel, type SecretStore } from '../secrets/index.ts';

/**
 * Checks, before anything is written, that every platform connection's bot token resolves;
 * each value is registered with the redactor at once. A missing one is a ConfigError naming
 * the field and the secret (never a value), so `snotra start` fails cleanly instead of polling
 * with nothing.
 */
export async function preflightPlatformTokens(
  loaded: LoadedConfig,
  secretStore: SecretStore | undefined,
  redactor: Redactor,
): Promise<void> {
  const problems: string[] = [];
  for (const [i, p] of loaded.config.surfaces.platforms.entries()) {
    const at = `surfaces.platforms[${i}].token`;
    let value: string | null;
    try {
      value = await readReference(p.token, secretStore);
    } catch (err) {
      problems.push(
        `${at}: ${referenceLabel(p.token)} cannot be read: ${redactor.redactString((err as Error).message)}`,
      );
      continue;
    }
    if (value === null) {
      problems.push(`${at}: ${missingSecretError(p.token, secretStore).message}`);
      continue;
    }
    redactor.registerSecret(value);
  }
  if (problems.length > 0) throw new ConfigError(loaded.file ?? '(config)', problems);
}
