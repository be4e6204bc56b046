import type { SecretReference } from '../../actors/tools/types.ts';
import { secretEnvName } from './env.ts';
import { DEFAULT_KEYRING_SERVICE } from './keyring.ts';
import { SecretStoreError, SecretStoreErrorCode, type SecretStore } from './store.ts';

export type { SecretReference } from '../../actors/tools/types.ts';

/** Where `{ "env": NAME }` references read: the runtime's environment by default. */
export type SecretEnv = Readonly<Record<string, string | undefined>>;

/** How a reference reads in a message: `secret "openai"` or `environment variable OPENAI_API_KEY`. */
export function referenceLabel(ref: SecretReference): string {
  return 'env' in ref ? `environment variable ${ref.env}` : `secret ${JSON.stringify(ref.secret)}`;
}

/**
 * What to do so `ref` resolves, naming the exact variable or keyring entry: for the env store
 * its `SNOTRA_SECRET_<NAME>` variable, for the OS keyring its service and account, for an
 * `{ "env" }` reference the variable itself. Never a value.
 */
export function whereToSet(ref: SecretReference, store: SecretStore | undefined): string {
  if ('env' in ref) return `export ${ref.env} in the environment snotra starts in`;
  const name = ref.secret;
  if (store === undefined)
    return `set secrets.backend in the config, or reference a variable you export instead: { "env": "VARIABLE" }`;
  switch (store.kind) {
    case 'env':
      return `set ${secretEnvName(name)} in the environment snotra starts in (secrets.backend "env")`;
    case 'os':
      return `store it in the OS keyring as service "${DEFAULT_KEYRING_SERVICE}", account "${name}" (e.g. with secret-tool or Keychain Access), or reference a variable you export instead: { "env": "VARIABLE" }`;
    default:
      return `put "${name}" in the ${store.kind} secret store`;
  }
}

/** The error of a reference that resolves to nothing: what is missing and how to set it. */
export function missingSecretError(ref: SecretReference, store: SecretStore | undefined): SecretStoreError {
  const what =
    'env' in ref
      ? `environment variable ${ref.env} is not set`
      : store === undefined
        ? `secret ${JSON.stringify(ref.secret)} cannot be read: no secret store is configured`
        : `secret ${JSON.stringify(ref.secret)} is not set in the ${store.kind} secret store`;
  const code =
    'env' in ref || store !== undefined ? SecretStoreErrorCode.notFound : SecretStoreErrorCode.unavailable;
  return new SecretStoreError(code, `${what}: ${whereToSet(ref, store)}`);
}

/**
 * The value `ref` names, or null when it is unset or empty: a `{ "secret" }` from `store`
 * (a store failure is thrown, naming the secret), an `{ "env" }` from `env`. A `{ "secret" }`
 * without a store is null (the caller says so with `missingSecretError`).
 */
export async function readReference(
  ref: SecretReference,
  store: SecretStore | undefined,
  env: SecretEnv = process.env,
): Promise<string | null> {
  if ('env' in ref) {
    const value = Object.hasOwn(env, ref.env) ? env[ref.env] : undefined;
    return value === undefined || value === '' ? null : value;
  }
  if (store === undefined) return null;
  const value = await store.get(ref.secret);
  return value === null || value === '' ? null : value;
}
