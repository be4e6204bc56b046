import { assertSecretName, SecretStoreError, SecretStoreErrorCode, type SecretStore } from './store.ts';

/** Prefix of the variables the env-backed store reads. */
export const SECRET_ENV_PREFIX = 'SNOTRA_SECRET_';

/**
 * The variable that carries secret `name`: the prefix, then the name upper-cased with every
 * character other than a letter or digit turned into `_` (`github-token` →
 * `SNOTRA_SECRET_GITHUB_TOKEN`).
 */
export function secretEnvName(name: string): string {
  assertSecretName(name);
  return SECRET_ENV_PREFIX + name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * A read-only store fed by `SNOTRA_SECRET_<NAME>` variables — only when the config explicitly
 * selects it (`secrets.backend: "env"`), for headless machines and CI where no OS store exists.
 *
 * Guarantees: every `SNOTRA_SECRET_*` variable is read once, at construction, and deleted from
 * the given environment (by default `process.env`) right away, so children and later code never
 * see it (children get an allowlisted environment anyway). Values stay in this process's memory
 * only. `set` is refused (`secret_store_read_only`): this backend persists nothing; `delete`
 * forgets a value for the rest of the process's life.
 *
 * Weaker than an OS store: whoever starts the runtime can read the values, and so can anything
 * that can read this process's initial environment (`/proc/<pid>/environ` is a sensitive path for
 * tools, but not for other programs of the same user).
 */
export class EnvSecretStore implements SecretStore {
  readonly kind = 'env';
  private readonly values = new Map<string, string>();

  constructor(env: Record<string, string | undefined> = process.env) {
    for (const key of Object.keys(env)) {
      if (!key.startsWith(SECRET_ENV_PREFIX)) continue;
      const value = env[key];
      delete env[key];
      if (value !== undefined && key.length > SECRET_ENV_PREFIX.length) this.values.set(key, value);
    }
  }

  /** How many secrets were taken from the environment. */
  get size(): number {
    return this.values.size;
  }

  /** Every value taken from the environment (the runtime registers them all with the redactor). */
  heldValues(): Iterable<string> {
    return this.values.values();
  }

  /** See `SecretStore.get`. */
  async get(name: string): Promise<string | null> {
    return this.values.get(secretEnvName(name)) ?? null;
  }

  /** Refused: the env-backed store is read-only. */
  async set(name: string, _value: string): Promise<void> {
    assertSecretName(name);
    throw new SecretStoreError(
      SecretStoreErrorCode.readOnly,
      `the env secret store is read-only: set ${secretEnvName(name)} in the runtime's environment instead`,
    );
  }

  /** Forgets `name` for the rest of this process's life; false when it was not there. */
  async delete(name: string): Promise<boolean> {
    return this.values.delete(secretEnvName(name));
  }
}
