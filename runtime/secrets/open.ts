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

/** The backend a new config should name (`snotra init`), and why, in one line. */
export interface SecretBackendChoice {
  readonly backend: 'os' | 'env';
  readonly reason: string;
}

/**
 * The backend a new config should name: `os` when the OS keyring answers here (it is opened and
 * probed: an entry written, read back and deleted), `env` otherwise (a headless machine without a
 * Secret Service), so the first run does not fail on a keyring that is not there. The reason is
 * the probe's outcome (on failure, what the keyring said, first line). `open` is a seam for tests
 * (e.g. `openKeyringStore` with an entry factory).
 */
export async function chooseSecretBackend(
  open: () => Promise<unknown> = () => openKeyringStore(),
): Promise<SecretBackendChoice> {
  try {
    await open();
    return {
      backend: SecretBackend.os,
      reason: 'the OS keyring answered a probe (an entry written, read back and deleted)',
    };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    return { backend: SecretBackend.env, reason: (text.split('\n')[0] ?? '').slice(0, 400) };
  }
}

/** `chooseSecretBackend`'s backend alone. */
export async function detectSecretBackend(
  open: () => Promise<unknown> = () => openKeyringStore(),
): Promise<'os' | 'env'> {
  return (await chooseSecretBackend(open)).backend;
}
