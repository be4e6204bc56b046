/**
 * The store's error classes, split by who is at fault, each with a closed union of stable
 * snake_case codes. Messages name the bad input and where it came from; values that may carry
 * user data are passed through the redactor before they are quoted (see `quote`).
 */

/** Codes of errors raised while opening a database file. */
export const OpenErrorCode = {
  databaseNewer: 'database_newer',
  notSnotraDatabase: 'not_snotra_database',
  migrationFailed: 'migration_failed',
  openFailed: 'open_failed',
  databaseCorrupt: 'database_corrupt',
} as const;
export type OpenErrorCode = (typeof OpenErrorCode)[keyof typeof OpenErrorCode];

/** Codes of errors for records refused before any side effect (bad input or bad stored data). */
export const RecordErrorCode = {
  invalidInput: 'invalid_input',
  forbiddenKey: 'forbidden_key',
  snapshotVersionMissing: 'snapshot_version_missing',
  snapshotVersionFuture: 'snapshot_version_future',
  snapshotVersionUnsupported: 'snapshot_version_unsupported',
  snapshotVersionMalformed: 'snapshot_version_malformed',
  snapshotMalformed: 'snapshot_malformed',
  snapshotTooLarge: 'snapshot_too_large',
  storedRecordCorrupt: 'stored_record_corrupt',
} as const;
export type RecordErrorCode = (typeof RecordErrorCode)[keyof typeof RecordErrorCode];

/** Codes of errors for operations that do not fit the current state of a stored record. */
export const StateErrorCode = {
  callNotFound: 'call_not_found',
  callNotStarted: 'call_not_started',
  callNotInterrupted: 'call_not_interrupted',
  grantNotFound: 'grant_not_found',
  grantAlreadyRevoked: 'grant_already_revoked',
  durabilityMismatch: 'durability_mismatch',
  readonlyStore: 'readonly_store',
  transactionDoomed: 'transaction_doomed',
  syncFailed: 'sync_failed',
} as const;
export type StateErrorCode = (typeof StateErrorCode)[keyof typeof StateErrorCode];

/** Every code a store error can carry. */
export type StoreErrorCode = OpenErrorCode | RecordErrorCode | StateErrorCode;

/** Base class of every error the store throws on purpose. `code` is stable; `message` is for people. */
export class StoreError extends Error {
  /** Stable snake_case code; switch on this, never on the message. */
  readonly code: StoreErrorCode;
  /** Structured, secret-free facts about the failure (ids, versions, paths). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: StoreErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** The database file cannot be used: written by a newer version, not ours, or a migration failed. */
export class StoreOpenError extends StoreError {
  declare readonly code: OpenErrorCode;
  constructor(
    code: OpenErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(code, message, details, options);
  }
}

/** A record was refused before any side effect: invalid input, forbidden key, unsupported version. */
export class RecordRejectedError extends StoreError {
  declare readonly code: RecordErrorCode;
  constructor(
    code: RecordErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(code, message, details, options);
  }
}

/** The operation does not fit the stored state (unknown call, call not started, grant revoked…). */
export class StoreStateError extends StoreError {
  declare readonly code: StateErrorCode;
  constructor(code: StateErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

/** Anything that can scrub a string; the Redactor satisfies it. */
export interface StringScrubber {
  redactString(value: string): string;
}

/**
 * Quotes a value for an error message: JSON-quoted, control characters escaped, cut to 80
 * characters, and scrubbed of registered secrets when a scrubber is given.
 */
export function quote(value: unknown, scrubber?: StringScrubber): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  if (scrubber) text = scrubber.redactString(text);
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  return JSON.stringify(text);
}
