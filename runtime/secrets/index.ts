/**
 * Secrets (DESIGN.md §10): the store seam and its backends, and the resolver tools use. See
 * README.md in this folder for choosing a backend.
 */
export { assertSecretName, SecretStoreError, SecretStoreErrorCode } from './store.ts';
export type { SecretStore } from './store.ts';
export { MemorySecretStore } from './memory.ts';
export { EnvSecretStore, SECRET_ENV_PREFIX, secretEnvName } from './env.ts';
export { DEFAULT_KEYRING_SERVICE, KeyringSecretStore, openKeyringStore } from './keyring.ts';
export type { KeyringEntry, KeyringEntryFactory, KeyringStoreOptions } from './keyring.ts';
export { chooseSecretBackend, detectSecretBackend, openSecretStore, SecretBackend } from './open.ts';
export type { OpenSecretStoreOptions, SecretBackendChoice } from './open.ts';
export { createSecretResolver } from './resolver.ts';
export type { SecretRegistry, SecretResolverOptions } from './resolver.ts';
export { registerKnownSecrets, secretNamesIn } from './preload.ts';
export { missingSecretError, readReference, referenceLabel, whereToSet } from './reference.ts';
export type { SecretEnv, SecretReference } from './reference.ts';
export type { HeldSecrets } from './preload.ts';
