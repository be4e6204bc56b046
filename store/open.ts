import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { StoreContext } from './context.ts';
import { CONNECTION_PRAGMAS, TransactionRunner } from './durability.ts';
import { OpenErrorCode, StoreError, StoreOpenError } from './errors.ts';
import type { SyncFile, SyncFileNow } from './group-sync.ts';
import { SCHEMA_VERSION } from './migrations/index.ts';
import { assertUsable, migrate, readSchemaInfo } from './migrations/run.ts';
import type { Redactor } from './redaction/redactor.ts';
import { Store } from './store.ts';

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** The database file (see `resolveDbPath`: `<stateDir>/snotra.db` by default). */
  readonly path: string;
  /** The redactor every payload passes through before it is written. Required: no unredacted store. */
  readonly redactor: Redactor;
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly clock?: () => number;
  /**
   * Open an existing file for reading only: no migration, no WAL switch, every write refused.
   * Files at any schema version from 1 up to the current one can be read.
   */
  readonly readonly?: boolean;
  /** How long to wait for another connection's write lock, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
  /**
   * Run `PRAGMA quick_check` on an existing file before anything else (default: on for
   * read-write opens, off for read-only ones). A damaged file is refused (`database_corrupt`).
   */
  readonly integrityCheck?: boolean;
  /** @internal How `store.sync()` flushes a file (tests inject faults and timing). Default fdatasync. */
  readonly syncFile?: SyncFile;
  /** @internal The blocking flush of `store.syncNow()` (tests inject faults and timing). */
  readonly syncFileNow?: SyncFileNow;
}

/**
 * Refuses a damaged database before anything reads or writes its content: `PRAGMA quick_check`
 * (b-tree structure, page and record formats; linear in the file's size) must say `ok`.
 */
function assertIntact(db: Database.Database, file: string): void {
  let problems: string[];
  try {
    problems = (db.pragma('quick_check(5)') as { quick_check: string }[]).map((r) => r.quick_check);
  } catch (error) {
    problems = [(error as Error).message];
  }
  if (problems.length === 1 && problems[0] === 'ok') return;
  throw new StoreOpenError(
    OpenErrorCode.databaseCorrupt,
    `${file} is damaged (integrity check: ${problems.slice(0, 3).join('; ')}); it was not modified. ` +
      'Restore it from a backup or move it aside to start with a new database.',
    { file },
  );
}

/**
 * Opens (creating when missing, with its folder, mode 0700/0600) a Snotra database. In order,
 * before anything is written: refuses a damaged file (`database_corrupt`, see `integrityCheck`); a file from a newer schema version (`database_newer`,
 * naming the file and both versions) or of another application (`not_snotra_database`); then
 * switches to WAL and applies the pending migrations in one transaction (`migration_failed`
 * leaves the file unchanged).
 */
export function openStore(options: OpenStoreOptions): Store {
  const file = resolve(options.path);
  const readonly = options.readonly === true;
  if (readonly && !existsSync(file)) {
    throw new StoreOpenError(OpenErrorCode.openFailed, `${file} does not exist; nothing to read`, { file });
  }
  const created = !existsSync(file);
  if (created) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  let db: Database.Database;
  try {
    db = new Database(file, { readonly, fileMustExist: readonly });
  } catch (error) {
    throw new StoreOpenError(
      OpenErrorCode.openFailed,
      `${file} could not be opened: ${(error as Error).message}`,
      { file },
      { cause: error },
    );
  }
  try {
    if (created) chmodSync(file, 0o600);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (!created && (options.integrityCheck ?? !readonly)) assertIntact(db, file);
    const info = readSchemaInfo(db);
    assertUsable(info, file);
    let version = info.version;
    if (readonly) {
      if (version < 1) {
        throw new StoreOpenError(
          OpenErrorCode.notSnotraDatabase,
          `${file} has no Snotra schema (version 0)`,
          {
            file,
          },
        );
      }
    } else {
      for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
      version = migrate(db, file).to;
    }
    const ctx: StoreContext = {
      db,
      file,
      redactor: options.redactor,
      clock: options.clock ?? Date.now,
      tx: new TransactionRunner(db),
      readonly,
    };
    return new Store(ctx, version, options.syncFile, options.syncFileNow);
  } catch (error) {
    db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreOpenError(
      OpenErrorCode.openFailed,
      `${file} could not be opened: ${(error as Error).message}`,
      { file },
      { cause: error },
    );
  }
}

/** The schema version this code writes (re-exported for callers and tests). */
export { SCHEMA_VERSION };
