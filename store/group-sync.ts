import { closeSync, constants, fdatasyncSync, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { StateErrorCode, StoreStateError } from './errors.ts';

/** Flushes one file to stable storage (fdatasync). Injected in tests to control timing and faults. */
export type SyncFile = (path: string) => Promise<void>;

/** fdatasync of `path` through a short-lived handle (Linux flushes the inode, whichever descriptor). */
export const fdatasyncFile: SyncFile = async (path) => {
  let handle: FileHandle | null = null;
  try {
    handle = await open(path, constants.O_RDONLY);
    await handle.datasync();
  } finally {
    await handle?.close();
  }
};

/** The blocking form of {@link SyncFile}, for a caller that must not return before the flush. */
export type SyncFileNow = (path: string) => void;

/** fdatasync of `path` on the calling thread (blocks it for the flush). */
export const fdatasyncFileNow: SyncFileNow = (path) => {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
};

/** Counters of a {@link GroupSync}, for tests and benchmarks. */
export interface GroupSyncStats {
  /** `sync()` calls. */
  readonly calls: number;
  /** fsyncs started (each covers every call made before it started). */
  readonly flushes: number;
  /** `sync()` calls answered without an fsync of their own (nothing written since one started). */
  readonly shared: number;
}

/**
 * Group commit of durable points: `sync()` resolves once every transaction committed before the
 * call is on stable storage, and all callers waiting at the same time share one fsync.
 *
 * A commit in WAL mode with `synchronous = NORMAL` has written its frames to the WAL file with
 * write(2) before it returns (so it survives a process crash at once); an fdatasync of the WAL
 * makes it survive power loss. SQLite checkpoints sync the WAL before copying it into the
 * database and sync the database after, so frames moved out of the WAL stay durable.
 *
 * The law: a `sync()` is answered only by an fsync that started after the call (an fsync already
 * in flight may have started before the caller's commit, so callers arriving during one share the
 * next). At most one fsync is in flight. An fsync error is sticky: after a failed flush the state
 * of the file on disk is unknown (the kernel may have dropped the dirty pages), so every later
 * `sync()` rejects with `sync_failed` until the store is reopened.
 *
 * With a write counter (`changes`: the connection's `total_changes()`, which grows with every row
 * written), the law is relaxed only where it cannot matter: a caller is answered by the fsync in
 * flight, or at once after a completed one, when nothing was written on the connection since that
 * fsync started — it then covers every commit the caller can depend on. This is how two durable
 * points of one step (a decision and the `started` row of the call it approves) share one fsync.
 */
export class GroupSync {
  #inFlight: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  #failed: Error | null = null;
  #calls = 0;
  #flushes = 0;
  #shared = 0;
  /** The write counter when the fsync in flight started. */
  #inFlightAt = -1;
  /** The write counter when the last successful fsync started: everything up to it is durable. */
  #durableAt = -1;

  constructor(
    /** The files whose contents must be durable (the WAL; the database file when there is no WAL). */
    private readonly files: () => readonly string[],
    /** For messages. */
    private readonly where: string,
    private readonly syncFile: SyncFile = fdatasyncFile,
    /** The connection's write counter (monotonic); without one every call waits for a fresh fsync. */
    private readonly changes: (() => number) | null = null,
    private readonly syncFileNow: SyncFileNow = fdatasyncFileNow,
    /**
     * Flush on the calling thread when callers are sparse (see `sync`). Off unless asked: the
     * blocking flush bypasses `syncFile`.
     */
    private readonly adaptive = false,
  ) {}

  /** When the last flush ended and how long it took (performance.now() ms), for `adaptive`. */
  #lastEnd = -Infinity;
  #lastTook = 0;

  get stats(): GroupSyncStats {
    return { calls: this.#calls, flushes: this.#flushes, shared: this.#shared };
  }

  /**
   * Records that everything written so far is on stable storage (a commit with
   * `synchronous = FULL` just fsynced the WAL), so a later `sync()` with no write since returns at once.
   */
  markDurable(): void {
    if (this.changes !== null && this.#failed === null) this.#durableAt = this.changes();
  }

  /**
   * The blocking form: returns once every commit so far is on stable storage (one fsync on the
   * calling thread, none when nothing was written since the last one). For a synchronous caller
   * that must not report a write before it is durable. Throws `sync_failed` as `sync` rejects.
   */
  syncNow(): void {
    this.#calls++;
    if (this.#failed !== null) throw this.#sticky();
    const at = this.changes?.() ?? -1;
    if (at !== -1 && at === this.#durableAt) {
      this.#shared++;
      return;
    }
    this.#flushNow();
  }

  #flushNow(): void {
    const at = this.changes?.() ?? -1;
    this.#flushes++;
    const t0 = performance.now();
    try {
      for (const file of this.files()) this.syncFileNow(file);
    } catch (error) {
      this.#failed = error instanceof Error ? error : new Error(String(error));
      throw this.#sticky();
    }
    this.#lastEnd = performance.now();
    this.#lastTook = this.#lastEnd - t0;
    if (at !== -1) this.#durableAt = Math.max(this.#durableAt, at);
  }

  sync(): Promise<void> {
    this.#calls++;
    if (this.#failed !== null) return Promise.reject(this.#sticky());
    if (this.changes !== null) {
      const at = this.changes();
      if (this.#inFlight === null && at === this.#durableAt) {
        this.#shared++;
        return Promise.resolve();
      }
      // Nothing written since the fsync in flight started: it covers this caller's commits.
      if (this.#inFlight !== null && at === this.#inFlightAt) {
        this.#shared++;
        return this.#inFlight;
      }
    }
    if (this.#inFlight === null) {
      // Callers further apart than a flush takes share nothing: flushing here spares the thread
      // pool round trips (under load each one waits for a core). Close together, they share one.
      if (this.adaptive && performance.now() - this.#lastEnd > this.#lastTook) {
        try {
          this.#flushNow();
        } catch (error) {
          return Promise.reject(error);
        }
        return Promise.resolve();
      }
      return this.#start();
    }
    // The flush in flight may predate this caller's commit: share the next one.
    this.#next ??= this.#inFlight.then(
      () => this.#startQueued(),
      () => this.#startQueued(),
    );
    return this.#next;
  }

  #startQueued(): Promise<void> {
    this.#next = null;
    if (this.#failed !== null) return Promise.reject(this.#sticky());
    return this.#start();
  }

  #start(): Promise<void> {
    this.#flushes++;
    const at = this.changes?.() ?? -1;
    this.#inFlightAt = at;
    const t0 = performance.now();
    const flush = (async () => {
      for (const file of this.files()) await this.syncFile(file);
    })().then(
      () => {
        this.#inFlight = null;
        this.#inFlightAt = -1;
        this.#lastEnd = performance.now();
        this.#lastTook = this.#lastEnd - t0;
        if (at !== -1 && this.#failed === null) this.#durableAt = Math.max(this.#durableAt, at);
      },
      (error: unknown) => {
        this.#inFlight = null;
        this.#inFlightAt = -1;
        this.#failed = error instanceof Error ? error : new Error(String(error));
        throw this.#sticky();
      },
    );
    this.#inFlight = flush;
    return flush;
  }

  #sticky(): StoreStateError {
    const error = new StoreStateError(
      StateErrorCode.syncFailed,
      `${this.where}: flushing to stable storage failed (${this.#failed?.message ?? 'unknown error'}); ` +
        'what was committed since the last successful flush may not survive power loss, so no later ' +
        'flush is trusted either: reopen the store',
      { file: this.where },
    );
    return error;
  }
}
