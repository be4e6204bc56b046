import type { Database } from 'better-sqlite3';
import type { TransactionRunner } from './durability.ts';
import { RecordErrorCode, RecordRejectedError, StateErrorCode, StoreStateError } from './errors.ts';
import type { Redactor } from './redaction/redactor.ts';

/** What every part of the store shares: the connection, the redactor, the clock, transactions. */
export interface StoreContext {
  readonly db: Database;
  /** The database file, for messages. */
  readonly file: string;
  /** The redactor every payload passes through before it is written. */
  readonly redactor: Redactor;
  /** Milliseconds since the epoch; injected so tests control time. */
  readonly clock: () => number;
  readonly tx: TransactionRunner;
  /** Opened read-only: every write is refused. */
  readonly readonly: boolean;
}

/** Throws `readonly_store` when the store was opened read-only. */
export function assertWritable(ctx: StoreContext, operation: string): void {
  if (ctx.readonly) {
    throw new StoreStateError(
      StateErrorCode.readonlyStore,
      `${operation}: ${ctx.file} was opened read-only; open it without { readonly: true } to write`,
      { file: ctx.file, operation },
    );
  }
}

/** Redacts `value` and serializes it for a payload column. */
export function toStoredJson(ctx: StoreContext, value: unknown): string {
  return JSON.stringify(ctx.redactor.redact(value)) ?? 'null';
}

/** Redacts a free-text column value (resource, target); null stays null. */
export function toStoredText(ctx: StoreContext, value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : ctx.redactor.redactString(value);
}

/** Parses a payload column written by `toStoredJson`; a corrupt one names its table, column and key. */
export function fromStoredJson(ctx: StoreContext, text: string | null, where: string): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RecordRejectedError(
      RecordErrorCode.storedRecordCorrupt,
      `${ctx.file}: ${where} is not valid JSON; the stored record is corrupt`,
      { file: ctx.file, where },
      { cause: error },
    );
  }
}
