import { EnvSecretStore } from './env.ts';
import { openKeyringStore, type KeyringStoreOptions } from './keyring.ts';
import { MemorySecretStore } from './memory.ts';
import type { SecretStore } from './store.ts';

/** Which secret backend to use. `os` is the default; `env` and `memory` must be chosen explicitly. */
export const SecretBackend = {
  os: 'os',
  env: 'env',
  memory: 'memory',
} as const;
export type SecretBackend = (typeof SecretBackend)[keyof typeof SecretBackend];

/** Options of `openSecretStore`. */
export interface OpenSecretStoreOptions {
  readonly backend?: SecretBackend;
  /** For `os`: keyring service name and test seams. */
  readonly keyring?: KeyringStoreOptions;
  /** For `env`: the environment to take `SNOTRA_SECRET_*` from (default `process.env`). */
  readonly env?: Record<string, string | undefined>;
}

/**
 * Opens the configured secret store. `os` (default) throws `secret_store_unavailable` when the
 * platform has no usable store — it never falls back to another backend on its own; `env` reads
 * and removes `SNOTRA_SECRET_*` variables; `memory` starts empty.
 */
export async function openSecretStore(options: OpenSecretStoreOptions = {}): Promise<SecretStore> {
  switch (options.backend ?? SecretBackend.os) {
    case SecretBackend.os:
      return openKeyringStore(options.keyring);
    case SecretBackend.env:
      return new EnvSecretStore(options.env);
    case SecretBackend.memory:
      return new MemorySecretStore();
  }
}

/**
 * The backend a new config should name: `os` when the OS keyring answers here (it is opened and
 * probed), `env` otherwise (a headless machine without a Secret Service), so the first run does
 * not fail on a keyring that is not there. `open` is a seam for tests.
 */
export async function detectSecretBackend(
  open: () => Promise<unknown> = () => openKeyringStore(),
): Promise<'os' | 'env'> {
  try {
    await open();
    return SecretBackend.os;
  } catch {
    return SecretBackend.env;
  }
}
