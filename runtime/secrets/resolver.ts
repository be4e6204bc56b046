import type { SecretReference, SecretResolver } from '../../actors/tools/types.ts';
import { missingSecretError, readReference, type SecretEnv } from './reference.ts';
import { assertSecretName, SecretStoreError, SecretStoreErrorCode, type SecretStore } from './store.ts';

/** What the resolver registers values with: `store/redaction`'s `Redactor` fits. */
export interface SecretRegistry {
  registerSecret(value: string): unknown;
}

/** Options of `createSecretResolver`. */
export interface SecretResolverOptions {
  /** When given, only these store names resolve (e.g. the secrets configured for one tool). */
  readonly allowed?: Iterable<string>;
  /** Where `{ "env" }` references read (default `process.env`). */
  readonly env?: SecretEnv;
}

/**
 * A `SecretResolver` over `store` (none: every `{ "secret" }` fails, naming what to set) and the
 * runtime's environment. Guarantees: a value is registered with `redactor` before `resolve`
 * returns it (so nothing can log or show it unredacted afterwards); a store name outside
 * `allowed` is refused (`secret_not_allowed`) without touching the store; a missing value is
 * `secret_not_found` (`secret_store_unavailable` without a store), its message naming the exact
 * variable or keyring entry to set. Error messages name secrets, never values.
 */
export function createSecretResolver(
  store: SecretStore | undefined,
  redactor: SecretRegistry,
  options: SecretResolverOptions = {},
): SecretResolver {
  const allowed = options.allowed === undefined ? null : new Set(options.allowed);
  return {
    async resolve(given: string | SecretReference): Promise<string> {
      const ref: SecretReference = typeof given === 'string' ? { secret: given } : given;
      if ('secret' in ref) {
        assertSecretName(ref.secret);
        if (allowed !== null && !allowed.has(ref.secret)) {
          throw new SecretStoreError(
            SecretStoreErrorCode.notAllowed,
            `secret "${ref.secret}" is not configured for this use`,
          );
        }
      }
      const value = await readReference(ref, store, options.env);
      if (value === null) throw missingSecretError(ref, store);
      redactor.registerSecret(value);
      return value;
    },
  };
}
