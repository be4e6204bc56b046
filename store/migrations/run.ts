import type { Database } from 'better-sqlite3';
import { OpenErrorCode, StoreOpenError } from '../errors.ts';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './index.ts';

/** What the file header says about a database. */
export interface SchemaInfo {
  /** `PRAGMA user_version`: the schema version, 0 for a new file. */
  readonly version: number;
  /** `PRAGMA application_id`: APPLICATION_ID for ours, 0 for a new file. */
  readonly applicationId: number;
  /** Whether the file has any table at all. */
  readonly hasTables: boolean;
}

/** Reads the header fields; writes nothing. */
export function readSchemaInfo(db: Database): SchemaInfo {
  const version = db.pragma('user_version', { simple: true }) as number;
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  const tables = db
    .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
    .pluck()
    .get() as number;
  return { version, applicationId, hasTables: tables > 0 };
}

/**
 * Refuses a file this code must not touch: one written by a newer schema version, or a SQLite
 * file of another application. Called before anything is written.
 */
export function assertUsable(info: SchemaInfo, file: string): void {
  if (info.version > SCHEMA_VERSION) {
    throw new StoreOpenError(
      OpenErrorCode.databaseNewer,
      `${file} has schema version ${info.version}, written by a newer Snotra; this version supports up to ` +
        `schema version ${SCHEMA_VERSION}. Upgrade Snotra to open it; the file was not changed.`,
      { file, fileVersion: info.version, supportedVersion: SCHEMA_VERSION },
    );
  }
  const foreign =
    (info.applicationId !== 0 && info.applicationId !== APPLICATION_ID) ||
    (info.applicationId === 0 && info.hasTables);
  if (foreign) {
    throw new StoreOpenError(
      OpenErrorCode.notSnotraDatabase,
      `${file} is a SQLite database of another application (application_id ${info.applicationId}); ` +
        `refusing to migrate it. Point --db or stateDir at a Snotra database.`,
      { file, applicationId: info.applicationId },
    );
  }
}

/** The versions a `migrate` call moved between. */
export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/**
 * Applies every migration above the file's version, in one IMMEDIATE transaction (so two
 * processes opening the same new file cannot both migrate it), and records the new version in
 * `PRAGMA user_version`. On any failure nothing is changed.
 */
export function migrate(db: Database, file: string, target: number = SCHEMA_VERSION): MigrationResult {
  const run = db.transaction((): MigrationResult => {
    const info = readSchemaInfo(db);
    assertUsable(info, file);
    const from = info.version;
    for (const migration of MIGRATIONS) {
      if (migration.version <= from || migration.version > target) continue;
      try {
        db.exec(migration.sql);
        migration.transform?.(db);
      } catch (error) {
        throw new StoreOpenError(
          OpenErrorCode.migrationFailed,
          `${file}: migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}. ` +
            `The file was left at schema version ${from}.`,
          { file, migration: migration.version, fromVersion: from },
          { cause: error },
        );
      }
    }
    const to = Math.max(from, target);
    if (to !== from) {
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${to}`);
    }
    return { from, to };
  });
  return run.immediate();
}
