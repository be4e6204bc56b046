import type { LoadedConfig } from '../load.ts';
import { EnvSecretStore } from '../../secrets/env.ts';
import { MemorySecretStore } from '../../secrets/memory.ts';
import { openSecretStore, type OpenSecretStoreOptions } from '../../secrets/open.ts';
import type { SecretStore } from '../../secrets/store.ts';

/**
 * A store opened at its first use: the `os` keyring is only contacted when a secret is needed,
 * so a config that names none starts on a machine without one. An unavailable store fails the
 * use (a model step, a tool call) with the store's own message, never start-up.
 */
class LazySecretStore implements SecretStore {
  readonly kind: string;
  #store: Promise<SecretStore> | null = null;

  constructor(
    kind: string,
    private readonly open: () => Promise<SecretStore>,
  ) {
    this.kind = kind;
  }

  #get(): Promise<SecretStore> {
    this.#store ??= this.open().catch((err: unknown) => {
      this.#store = null;
      throw err;
    });
    return this.#store;
  }

  async get(name: string): Promise<string | null> {
    return (await this.#get()).get(name);
  }

  async set(name: string, value: string): Promise<void> {
    return (await this.#get()).set(name, value);
  }

  async delete(name: string): Promise<boolean> {
    return (await this.#get()).delete(name);
  }
}

/**
 * The secret store a config selects with `secrets.backend`: `env` takes (and removes) the
 * `SNOTRA_SECRET_*` variables now; `memory` starts empty; `os` (the default) opens the
 * platform keyring at first use.
 */
export function secretStoreFromConfig(
  loaded: LoadedConfig,
  options: Pick<OpenSecretStoreOptions, 'env' | 'keyring'> = {},
): SecretStore {
  switch (loaded.config.secrets.backend) {
    case 'env':
      return new EnvSecretStore(options.env);
    case 'memory':
      return new MemorySecretStore();
    case 'os':
      return new LazySecretStore('os', () =>
        openSecretStore({ backend: 'os', ...(options.keyring ? { keyring: options.keyring } : {}) }),
      );
  }
}
