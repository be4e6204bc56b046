import type { Database } from 'better-sqlite3';
import { StateErrorCode, StoreStateError } from './errors.ts';

/*
 * Durability, table by table.
 *
 * The database runs in WAL mode with `synchronous = NORMAL` on the connection. A commit then
 * appends its pages to the WAL file with write(2) and returns; the WAL is fsynced at each
 * checkpoint. Consequences:
 *
 * - Process crash (SIGKILL, OOM kill, a runtime bug): every committed transaction survives,
 *   because the WAL bytes are already in the OS page cache. Proven by test/store/crash.test.ts.
 * - OS crash or power loss: the database stays consistent (a torn WAL tail is discarded by its
 *   checksums), but the last transactions since the previous fsync may roll back, whole.
 *
 * What must survive power loss, and what may not:
 *
 * - approvals (Inbox records and human decisions), session_approvals, standing_approvals:
 *   FULL — the WAL is fsynced before the commit returns (`durable` transactions below). Losing
 *   one means losing a human's consent or resurrecting a revoked grant. They happen at human
 *   speed, so the ~0.3 ms fsync is free. An fsync also makes every earlier NORMAL commit
 *   durable.
 * - tool_calls (the ledger) and audit_events: NORMAL — they are the hot path (several writes per
 *   tool call, 20k+ tool calls/s target). After power loss their tail rolls back together (they
 *   are written in the same transactions), so the hash chain and the ledger/audit pairing stay
 *   consistent; a call whose `started` row rolled back may run again. For calls where that
 *   matters (external, not idempotent, no idempotency key accepted by the far side) the caller
 *   asks `beginCall(..., { durable: true })`: the `started` row is fsynced before the tool runs.
 * - run_snapshots: NORMAL, and may be batched (`putSnapshots`): a lost snapshot falls back to
 *   the previous one, and the ledger makes replaying the steps in between safe.
 *
 * `synchronous` cannot change inside a transaction, so a durable operation inside a caller's
 * non-durable transaction is refused (`durability_mismatch`) instead of silently weakened.
 */

/** PRAGMAs applied to every read-write connection. */
export const CONNECTION_PRAGMAS: readonly string[] = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  // Checkpoint (and fsync) every ~16 MiB of WAL rather than every 4 MiB: fewer stalls on the hot path.
  'wal_autocheckpoint = 4000',
  // Keep the WAL from growing without bound after a burst.
  'journal_size_limit = 67108864',
  'temp_store = MEMORY',
];

/** Options of one transaction. */
export interface TransactionOptions {
  /** fsync the WAL before the commit returns (survives power loss). Default false. */
  readonly durable?: boolean;
}

/**
 * Runs functions in IMMEDIATE transactions (the write lock is taken at BEGIN, so reads inside
 * see the latest data and two connections serialize instead of failing at commit). Nested
 * calls become savepoints of the enclosing transaction.
 */
export class TransactionRunner {
  private readonly runner: { immediate: (fn: () => unknown) => unknown; (fn: () => unknown): unknown };
  private outerDurable = false;
  private gen = 0;

  constructor(private readonly db: Database) {
    this.runner = db.transaction((fn: () => unknown) => fn());
  }

  /** Whether a transaction is open on this connection. */
  get active(): boolean {
    return this.db.inTransaction;
  }

  /**
   * Changes whenever a transaction starts or anything rolls back: data cached while it stays
   * the same (the audit chain's tail) is still what the database holds.
   */
  get generation(): number {
    return this.gen;
  }

  /**
   * Runs `fn`, whose only write is one SQL statement, atomically: inside an open transaction it
   * runs as is (a failing statement changes nothing by itself, so no savepoint is needed),
   * otherwise in its own non-durable transaction.
   */
  runStatement<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.gen++;
    return this.invoke(() => this.runner.immediate(fn));
  }

  /** Runs `fn` atomically; see the module comment for what `durable` means. */
  run<T>(fn: () => T, options: TransactionOptions = {}): T {
    const durable = options.durable === true;
    if (this.db.inTransaction) {
      if (durable && !this.outerDurable) {
        throw new StoreStateError(
          StateErrorCode.durabilityMismatch,
          'a durable write (approval, grant, revoke or durable beginCall) was called inside a non-durable ' +
            'transaction; open the enclosing one with store.transaction(fn, { durable: true })',
        );
      }
      return this.invoke(() => this.runner(fn));
    }
    this.gen++;
    if (!durable) return this.invoke(() => this.runner.immediate(fn));
    this.db.pragma('synchronous = FULL');
    this.outerDurable = true;
    try {
      return this.invoke(() => this.runner.immediate(fn));
    } finally {
      this.outerDurable = false;
      this.db.pragma('synchronous = NORMAL');
    }
  }

  private invoke<T>(call: () => unknown): T {
    try {
      return call() as T;
    } catch (error) {
      this.gen++;
      throw error;
    }
  }
}
