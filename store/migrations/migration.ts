/** One forward-only schema step. `version` is the schema version the database has after it. */
export interface Migration {
  /** The version this migration produces (1, 2, …; contiguous). */
  readonly version: number;
  /** A short kebab-case name, for messages. */
  readonly name: string;
  /** The SQL applied inside the migration transaction. */
  readonly sql: string;
}
