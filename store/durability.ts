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
 *   durable. The runtime uses the group-commit form (`durable: 'deferred'`, then `store.sync()`
 *   or `store.syncNow()` before it reports or acts on the write): the same guarantee, with one
 *   fsync shared by every durable point waiting at the same time (1.3–10 ms on the bench VM).
 * - the ledger (ledger_calls, ledger_outcomes, ledger_open) and audit_log: NORMAL — they are the
 *   hot path (several writes per tool call, 20k+ tool calls/s target). After power loss their
 *   tail rolls back together (they are written in the same transactions), so the hash chain and
 *   the ledger/audit pairing stay consistent; a call whose `started` row rolled back may run
 *   again. For calls where that matters (external, not idempotent, no idempotency key accepted
 *   by the far side) the caller asks `beginCall(..., { durable: true })`: the `started` row is
 *   fsynced before the tool runs.
 * - run_snapshots: NORMAL, and may be batched (`putSnapshots`): a lost snapshot falls back to
 *   the previous one, and the ledger makes replaying the steps in between safe.
 * - a run's own audit steps (`proposed`, `policy_decided`) are deferred (`audit.appendDeferred`):
 *   written first in the next transaction this runner opens (the approval, the ledger's
 *   `started` row), before any read of the log, any `store.sync()`, and at the end of the turn at
 *   the latest. A process crash can lose only the current turn's, whose steps re-run on restore.
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
  /**
   * `true`: fsync the WAL before the commit returns (survives power loss). `'deferred'`: the
   * group-commit form — commit like a normal transaction (it survives a process crash at once)
   * and become durable against power loss when a later `store.sync()` resolves; durable writes
   * (approvals, grants, durable `beginCall`) are allowed inside, and the caller must await
   * `store.sync()` before it reports or acts on them. Concurrent callers then share one fsync.
   * Default false.
   */
  readonly durable?: boolean | 'deferred';
}

/**
 * Runs functions in IMMEDIATE transactions (the write lock is taken at BEGIN, so reads inside
 * see the latest data and two connections serialize instead of failing at commit). Nested
 * `run` calls become savepoints of the enclosing transaction; nested `op` calls do not (see there).
 */
export class TransactionRunner {
  private readonly runner: { immediate: (fn: () => unknown) => unknown; (fn: () => unknown): unknown };
  private outerDurable = false;
  private gen = 0;
  /** Set when a store operation failed inside the open transaction (see `op`). */
  private doomed: { readonly where: string } | null = null;
  /** How many of this runner's own transactions are open (0 or 1; see `owned`). */
  private depth = 0;
  /** Writes held back until the transaction commits or a savepoint begins (see `onFlush`). */
  private readonly flushes: Array<() => void> = [];
  /** Forgets what was held back when the work it belonged to rolled back. */
  private readonly discards: Array<() => void> = [];
  /** Called after a `durable: true` transaction committed (its commit fsynced the WAL). */
  onDurableCommit: (() => void) | null = null;
  /** Parts that write first in every transaction this runner opens, and hear how it ended. */
  private readonly outers: Array<{ begin: () => void; end: (committed: boolean) => void }> = [];

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
   * Registers a part that holds writes back within a transaction (the audit log gathers a
   * transaction's events into few rows): `flush` writes them, and runs before every commit and
   * before a savepoint begins, so a savepoint's rollback never takes earlier work with it;
   * `discard` forgets them when the transaction or a savepoint rolls back.
   */
  onFlush(flush: () => void, discard: () => void): void {
    this.flushes.push(flush);
    this.discards.push(discard);
  }

  /**
   * Registers a part whose writes wait for the next transaction (the audit log's deferred
   * events): `begin` runs first inside every transaction this runner opens (not a savepoint),
   * `end` once that transaction committed (`true`) or rolled back (`false`), so what `begin`
   * wrote is known to be stored, or is written again by the next one.
   */
  onOuter(begin: () => void, end: (committed: boolean) => void): void {
    this.outers.push({ begin, end });
  }

  /** Runs `call`, a transaction this runner opens, with the `onOuter` parts around it. */
  private outermost<T>(call: () => T): T {
    let committed = false;
    try {
      const result = call();
      committed = true;
      return result;
    } finally {
      for (const o of this.outers) o.end(committed);
    }
  }

  private begin(): void {
    for (const o of this.outers) o.begin();
  }

  /** Opens this runner's own IMMEDIATE transaction around `body` (the `onOuter` parts around it). */
  private open<T>(body: () => T): T {
    return this.outermost(() => this.own(() => this.invoke<T>(() => this.runner.immediate(body))));
  }

  /**
   * Whether the open transaction is this runner's, so held-back writes will be flushed before
   * it commits. Not so for one opened on the raw connection: writes must not wait there.
   */
  get owned(): boolean {
    return this.depth > 0;
  }

  /** Writes what is held back now (before a read of it inside the transaction). */
  flush(): void {
    for (const flush of this.flushes) flush();
  }

  /**
   * Runs `fn`, whose only write is one SQL statement, atomically: inside an open transaction it
   * runs as is (a failing statement changes nothing by itself, so no savepoint is needed),
   * otherwise in its own non-durable transaction.
   */
  runStatement<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.gen++;
    return this.open(() => {
      this.begin();
      const result = fn();
      this.flush();
      return result;
    });
  }

  /**
   * Runs `fn` atomically; see the module comment for what `durable` means. Nested inside an
   * open transaction it becomes a savepoint: a failure inside rolls back only its own writes.
   */
  run<T>(fn: () => T, options: TransactionOptions = {}): T {
    if (this.db.inTransaction) {
      this.assertDurability(options);
      const doomed = this.doomed;
      // What is held back belongs to the enclosing work: write it before the savepoint.
      this.flush();
      try {
        return this.invoke(() => this.runner(fn));
      } catch (error) {
        // The savepoint rolled back whatever failed inside it, half-written operations included.
        this.doomed = doomed;
        throw error;
      }
    }
    return this.outer(fn, options);
  }

  /**
   * Runs one store operation (a ledger transition with its audit event). Alone, it is its own
   * transaction. Inside a caller's transaction it runs without a savepoint — on the hot path
   * a savepoint costs more than the operation's writes — so if it throws, the caller's
   * transaction is doomed: it rolls back whole (`transaction_doomed`) even when the caller
   * catches the error, and no half-written operation is ever committed.
   */
  op<T>(where: string, fn: () => T, options: TransactionOptions = {}): T {
    if (!this.db.inTransaction) return this.outer(fn, options);
    this.assertDurability(options);
    try {
      return fn();
    } catch (error) {
      this.doomed ??= { where };
      throw error;
    }
  }

  private outer<T>(fn: () => T, options: TransactionOptions): T {
    const durable = options.durable === true;
    this.gen++;
    this.doomed = null;
    const body = (): T => {
      this.begin();
      const result = fn();
      if (this.doomed !== null) {
        throw new StoreStateError(
          StateErrorCode.transactionDoomed,
          `${this.doomed.where} failed inside this transaction and its writes cannot be separated from the ` +
            'rest, so the whole transaction was rolled back; nothing of it was written',
          { where: this.doomed.where },
        );
      }
      this.flush();
      return result;
    };
    if (options.durable === 'deferred') {
      // Durable writes inside are allowed: the caller awaits store.sync() before acting on them.
      this.outerDurable = true;
      try {
        return this.open(body);
      } finally {
        this.outerDurable = false;
      }
    }
    if (!durable) return this.open(body);
    this.db.pragma('synchronous = FULL');
    this.outerDurable = true;
    try {
      const result = this.open(body);
      // The commit fsynced the WAL: every earlier commit of this connection is durable too.
      this.onDurableCommit?.();
      return result;
    } finally {
      this.outerDurable = false;
      this.db.pragma('synchronous = NORMAL');
    }
  }

  private assertDurability(options: TransactionOptions): void {
    if ((options.durable === true || options.durable === 'deferred') && !this.outerDurable) {
      throw new StoreStateError(
        StateErrorCode.durabilityMismatch,
        'a durable write (approval, grant, revoke or durable beginCall) was called inside a non-durable ' +
          'transaction; open the enclosing one with store.transaction(fn, { durable: true })',
      );
    }
  }

  private own<T>(call: () => T): T {
    this.depth++;
    try {
      return call();
    } finally {
      this.depth--;
    }
  }

  private invoke<T>(call: () => unknown): T {
    try {
      return call() as T;
    } catch (error) {
      this.gen++;
      for (const discard of this.discards) discard();
      throw error;
    }
  }
}
