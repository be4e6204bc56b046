import type { SecretResolver } from '../../actors/tools/types.ts';
import { assertSecretName, SecretStoreError, SecretStoreErrorCode, type SecretStore } from './store.ts';

/** What the resolver registers values with: `store/redaction`'s `Redactor` fits. */
export interface SecretRegistry {
  registerSecret(value: string): unknown;
}

/** Options of `createSecretResolver`. */
export interface SecretResolverOptions {
  /** When given, only these names resolve (e.g. the secrets configured for one tool). */
  readonly allowed?: Iterable<string>;
}

/**
 * A `SecretResolver` over `store`. Guarantees: a value is registered with `redactor` before
 * `resolve` returns it (so nothing can log or show it unredacted afterwards); a name outside
 * `allowed` is refused (`secret_not_allowed`) without touching the store; a missing secret is
 * `secret_not_found`. Error messages name the secret, never its value.
 */
export function createSecretResolver(
  store: SecretStore,
  redactor: SecretRegistry,
  options: SecretResolverOptions = {},
): SecretResolver {
  const allowed = options.allowed === undefined ? null : new Set(options.allowed);
  return {
    async resolve(name: string): Promise<string> {
      assertSecretName(name);
      if (allowed !== null && !allowed.has(name)) {
        throw new SecretStoreError(
          SecretStoreErrorCode.notAllowed,
          `secret "${name}" is not configured for this use`,
        );
      }
      const value = await store.get(name);
      if (value === null || value === '') {
        throw new SecretStoreError(
          SecretStoreErrorCode.notFound,
          `secret "${name}" is not set in the ${store.kind} secret store`,
        );
      }
      redactor.registerSecret(value);
      return value;
    },
  };
}
