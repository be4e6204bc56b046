import { constants } from 'node:fs';
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

/** Counters of a {@link GroupSync}, for tests and benchmarks. */
export interface GroupSyncStats {
  /** `sync()` calls. */
  readonly calls: number;
  /** fsyncs started (each covers every call made before it started). */
  readonly flushes: number;
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
 */
export class GroupSync {
  #inFlight: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  #failed: Error | null = null;
  #calls = 0;
  #flushes = 0;

  constructor(
    /** The files whose contents must be durable (the WAL; the database file when there is no WAL). */
    private readonly files: () => readonly string[],
    /** For messages. */
    private readonly where: string,
    private readonly syncFile: SyncFile = fdatasyncFile,
  ) {}

  get stats(): GroupSyncStats {
    return { calls: this.#calls, flushes: this.#flushes };
  }

  sync(): Promise<void> {
    this.#calls++;
    if (this.#failed !== null) return Promise.reject(this.#sticky());
    if (this.#inFlight === null) return this.#start();
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
    const flush = (async () => {
      for (const file of this.files()) await this.syncFile(file);
    })().then(
      () => {
        this.#inFlight = null;
      },
      (error: unknown) => {
        this.#inFlight = null;
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
