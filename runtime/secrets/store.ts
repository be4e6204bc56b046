/**
 * The secret store seam (DESIGN.md §10): config names secrets (`{ "secret": "github-token" }`);
 * values live in a store and are read only by the tool or provider that uses them.
 */

/** Get, set and delete secret values by name. Implementations never log a value. */
export interface SecretStore {
  /** Which backend this is (`os`, `env`, `memory`), for diagnostics. */
  readonly kind: string;
  /** The value stored under `name`, or null when there is none. */
  get(name: string): Promise<string | null>;
  /** Stores `value` under `name`, replacing any previous value. */
  set(name: string, value: string): Promise<void>;
  /** Removes `name`; false when there was nothing to remove. */
  delete(name: string): Promise<boolean>;
}

/** Stable codes of `SecretStoreError`. */
export const SecretStoreErrorCode = {
  unavailable: 'secret_store_unavailable',
  notFound: 'secret_not_found',
  readOnly: 'secret_store_read_only',
  invalidName: 'invalid_secret_name',
  notAllowed: 'secret_not_allowed',
  failed: 'secret_store_failed',
} as const;
export type SecretStoreErrorCode = (typeof SecretStoreErrorCode)[keyof typeof SecretStoreErrorCode];

/** A secret store failure. Messages name secrets and backends, never values. */
export class SecretStoreError extends Error {
  constructor(
    readonly code: SecretStoreErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SecretStoreError';
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Throws `invalid_secret_name` unless `name` is 1–128 of `[A-Za-z0-9._-]`, starting alphanumeric. */
export function assertSecretName(name: string): void {
  if (!NAME.test(name)) {
    throw new SecretStoreError(
      SecretStoreErrorCode.invalidName,
      'a secret name is 1-128 characters of letters, digits, ".", "_" and "-", starting with a letter or digit',
    );
  }
}
