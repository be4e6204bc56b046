import type { Database } from 'better-sqlite3';

/** One forward-only schema step. `version` is the schema version the database has after it. */
export interface Migration {
  /** The version this migration produces (1, 2, …; contiguous). */
  readonly version: number;
  /** A short kebab-case name, for messages. */
  readonly name: string;
  /** The SQL applied inside the migration transaction. */
  readonly sql: string;
  /**
   * Data work that SQL alone cannot do exactly (re-encoding rows the way the application hashed
   * them), run after `sql` in the same transaction; it may run more SQL.
   */
  readonly transform?: (db: Database) => void;
}
