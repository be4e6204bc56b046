import { existsSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { ApprovalInbox } from './approvals/inbox.ts';
import { AuditLog } from './audit/log.ts';
import type { StoreContext } from './context.ts';
import type { TransactionOptions } from './durability.ts';
import { StateErrorCode, StoreStateError } from './errors.ts';
import {
  GroupSync,
  fdatasyncFile,
  fdatasyncFileNow,
  type GroupSyncStats,
  type SyncFile,
  type SyncFileNow,
} from './group-sync.ts';
import { SessionApprovals } from './grants/session.ts';
import { StandingApprovals } from './grants/standing.ts';
import { ExternalCalls } from './ledger/external-calls.ts';
import { ToolCallLedger } from './ledger/ledger.ts';
import type { Redactor } from './redaction/redactor.ts';
import { RunSnapshots } from './snapshots/store.ts';
import { ScheduleJournal } from './schedule/journal.ts';
import { GoalStore } from './goals/goals.ts';
import { PlatformStore } from './platforms/index.ts';
import { SessionStore } from './sessions/sessions.ts';
import { RunTraces } from './traces/run-traces.ts';

/**
 * An open Snotra database: the durable state of the runtime. Obtain one with `openStore`.
 * Every payload written through it passes through its `redactor` first.
 */
export class Store {
  /** The append-only, hash-chained audit log. */
  readonly audit: AuditLog;
  /** The tool-call ledger (idempotency record). */
  readonly ledger: ToolCallLedger;
  /** The ledger's calls whose effects left the machine, by start time (what a rewind cannot undo). */
  readonly externalCalls: ExternalCalls;
  /** Approval requests and decisions: the Inbox. */
  readonly approvals: ApprovalInbox;
  /** Session-scoped approvals. */
  readonly sessionApprovals: SessionApprovals;
  /** Task-owned standing approvals. */
  readonly standingApprovals: StandingApprovals;
  /** Persisted run snapshots. */
  readonly snapshots: RunSnapshots;
  /** The scheduler's journal of firings. */
  readonly schedule: ScheduleJournal;
  /** Goal loops: their state, iteration journal and control requests. */
  readonly goals: GoalStore;
  /** Platform replies: inbound and outbound journals, pairing. */
  readonly platforms: PlatformStore;
  /** Durable conversations: each session's transcript and the run that holds it. */
  readonly sessions: SessionStore;
  /** Each run's trace context, while telemetry is on (issue 39). */
  readonly runTraces: RunTraces;

  readonly #sync: GroupSync;

  /** @internal Use `openStore`. */
  constructor(
    private readonly ctx: StoreContext,
    /** The schema version of the open file. */
    readonly schemaVersion: number,
    /** @internal How a file is flushed to stable storage (tests inject faults and timing). */
    syncFile?: SyncFile,
    /** @internal The blocking flush of `syncNow` (tests inject faults and timing). */
    syncFileNow?: SyncFileNow,
  ) {
    const wal = `${ctx.file}-wal`;
    const flush = syncFile ?? fdatasyncFile;
    const flushNow = syncFileNow ?? fdatasyncFileNow;
    // sqlite3_total_changes(): grows with every row this connection writes, so an unchanged value
    // means nothing was written since (and a flush that started then covers every commit).
    const totalChanges = ctx.db.prepare('SELECT total_changes()').pluck();
    this.#sync = new GroupSync(
      () => (ctx.readonly ? [] : [existsSync(wal) ? wal : ctx.file]),
      ctx.file,
      async (path) => {
        try {
          await flush(path);
        } catch (error) {
          // The WAL is removed when the last connection closes, after SQLite checkpointed it into
          // the database file and synced that file: what it held is then in the database file.
          if (path !== wal || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          await flush(ctx.file);
        }
      },
      () => totalChanges.get() as number,
      (path) => {
        try {
          flushNow(path);
        } catch (error) {
          if (path !== wal || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          flushNow(ctx.file);
        }
      },
      // Sparse callers flush on this thread, unless a test injected only the asynchronous flush.
      syncFile === undefined || syncFileNow !== undefined,
    );
    ctx.tx.onDurableCommit = () => this.#sync.markDurable();
    this.audit = new AuditLog(ctx, schemaVersion);
    this.ledger = new ToolCallLedger(ctx, this.audit);
    this.externalCalls = new ExternalCalls(ctx);
    this.approvals = new ApprovalInbox(ctx, this.audit);
    this.sessionApprovals = new SessionApprovals(ctx, this.audit, schemaVersion);
    this.standingApprovals = new StandingApprovals(ctx, this.audit);
    this.snapshots = new RunSnapshots(ctx);
    this.schedule = new ScheduleJournal(ctx);
    this.goals = new GoalStore(ctx);
    this.platforms = new PlatformStore(ctx, this.audit);
    this.sessions = new SessionStore(ctx);
    this.runTraces = new RunTraces(ctx);
  }

  /** The absolute path of the database file. */
  get path(): string {
    return this.ctx.file;
  }

  /** The redactor every stored payload passes through (register resolved secrets here). */
  get redactor(): Redactor {
    return this.ctx.redactor;
  }

  /** Whether the store was opened read-only. */
  get readonly(): boolean {
    return this.ctx.readonly;
  }

  /**
   * Runs `fn` in one transaction: every store call inside commits or rolls back together (nested
   * calls become savepoints). Use it to record `proposed`, `policy_decided` and `beginCall` in a
   * single commit, or to group several calls' writes (group commit). With `durable: true` the
   * commit is fsynced; it is required when `fn` touches approvals or grants (see durability.ts).
   */
  transaction<T>(fn: () => T, options: TransactionOptions = {}): T {
    return this.ctx.tx.run(fn, options);
  }

  /** Whether a transaction is open on this store's connection (a write now commits with it). */
  get inTransaction(): boolean {
    return this.ctx.db.inTransaction;
  }

  /**
   * Registers writes that join whichever transaction this store opens next (a run's snapshot
   * held back to the end of the turn): `write` runs inside every transaction before it commits
   * and before each savepoint begins, `undone` whenever a transaction or a savepoint rolls back
   * (what `write` wrote may be gone: write it again), `ended` once each transaction the store
   * opened committed (`true`) or rolled back (`false`). Not within a transaction opened on the raw
   * connection, whose end the store does not see. `write` must not throw: an error there
   * rolls back the transaction it joined.
   */
  joinEachCommit(part: {
    readonly write: () => void;
    readonly undone: () => void;
    readonly ended: (committed: boolean) => void;
  }): void {
    // Not inside a transaction opened on the raw connection: its rollback would not be seen.
    this.ctx.tx.onFlush(() => {
      if (this.ctx.tx.owned) part.write();
    }, part.undone);
    this.ctx.tx.onOuter(
      () => {},
      (committed) => part.ended(committed),
    );
  }

  /**
   * Group commit: resolves once every transaction committed before the call (and every audit
   * event deferred until then, see `audit.appendDeferred`) survives power loss (one fdatasync
   * of the WAL, shared by every caller waiting at the same time). Pair it with
   * `transaction(fn, { durable: 'deferred' })`: commit, then `await store.sync()` before
   * reporting or acting on the write. Rejects with `sync_failed` after a failed flush, and keeps
   * rejecting (the file's state on disk is unknown) until the store is reopened.
   */
  sync(): Promise<void> {
    if (this.ctx.db.inTransaction) {
      return Promise.reject(
        new StoreStateError(
          StateErrorCode.durabilityMismatch,
          'store.sync() was called inside an open transaction, which it cannot cover; call it after the ' +
            'transaction commits',
        ),
      );
    }
    this.audit.flushDeferred();
    return this.#sync.sync();
  }

  /**
   * The blocking form of `sync()`: returns once every commit so far is on stable storage (one
   * fsync on this thread; none when nothing was written since the last one). For a synchronous
   * caller that must not report a deferred write before it is durable (a human's decision).
   * Throws `sync_failed` like `sync` rejects; refused inside an open transaction.
   */
  syncNow(): void {
    if (this.ctx.db.inTransaction) {
      throw new StoreStateError(
        StateErrorCode.durabilityMismatch,
        'store.syncNow() was called inside an open transaction, which it cannot cover; call it after the ' +
          'transaction commits',
      );
    }
    this.audit.flushDeferred();
    this.#sync.syncNow();
  }

  /**
   * `sync()` for a durable point reached inside a larger synchronous step: waits one microtask —
   * until the step is over, an enclosing transaction included (transactions are synchronous) —
   * then syncs. A synchronous caller that flushes at the end of its step (`syncNow`, or a
   * `sync()` it starts first) then answers this one without a second fsync. The caller must
   * check that its write is still there (an enclosing transaction may have rolled back).
   */
  async syncAfterCommit(): Promise<void> {
    await Promise.resolve();
    return this.sync();
  }

  /** @internal Counters of `sync` (calls, fsyncs started), for tests and benchmarks. */
  get syncStats(): GroupSyncStats {
    return this.#sync.stats;
  }

  /** `PRAGMA integrity_check`: 'ok' or the problems SQLite found. */
  integrityCheck(): string {
    const rows = this.ctx.db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.map((row) => row.integrity_check).join('\n');
  }

  /** Copies the WAL into the database file now (PASSIVE: never blocks other connections). */
  checkpoint(): void {
    this.ctx.db.pragma('wal_checkpoint(PASSIVE)');
  }

  /** Whether the connection is open (false once closed, by `close` or from outside). */
  get open(): boolean {
    return this.ctx.db.open;
  }

  /** Closes the connection (checkpointing the WAL when this is the last connection). */
  close(): void {
    if (!this.ctx.db.open) return;
    try {
      // Deferred audit events are written before the connection closes.
      if (!this.ctx.readonly) this.audit.flushDeferred();
    } finally {
      this.ctx.db.close();
    }
  }

  /** @internal The raw connection, for tests and diagnostics in this folder only. */
  get connection(): Database {
    return this.ctx.db;
  }
}
