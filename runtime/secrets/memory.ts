import { assertSecretName, type SecretStore } from './store.ts';

/**
 * An in-memory secret store, for tests and for values handed over at start-up. Nothing is
 * persisted; values are gone when the process ends. Never chosen implicitly.
 */
export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory';
  private readonly values = new Map<string, string>();

  /** Starts with `initial` entries (names are validated). */
  constructor(initial: Readonly<Record<string, string>> = {}) {
    for (const [name, value] of Object.entries(initial)) {
      assertSecretName(name);
      this.values.set(name, value);
    }
  }

  /** Every value held (the runtime registers them all with the redactor). */
  heldValues(): Iterable<string> {
    return this.values.values();
  }

  /** See `SecretStore.get`. */
  async get(name: string): Promise<string | null> {
    assertSecretName(name);
    return this.values.get(name) ?? null;
  }

  /** See `SecretStore.set`. */
  async set(name: string, value: string): Promise<void> {
    assertSecretName(name);
    this.values.set(name, value);
  }

  /** See `SecretStore.delete`. */
  async delete(name: string): Promise<boolean> {
    assertSecretName(name);
    return this.values.delete(name);
  }
}
