/**
 * The worker pool file tools run their heavy work in, so a large search never blocks the event
 * loop of the actor system. A bounded queue: when it is full, new work is refused at once with
 * `pool_queue_full` rather than piling up.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ToolErrorCode } from '../codes.ts';
import { ToolError } from '../types.ts';
import type { ReadOutcome, ReadRequest, ReadTask, ScanResult, ScanTask } from './protocol.ts';

/** Options of `FileWorkerPool`. */
export interface FileWorkerPoolOptions {
  /** Threads at most (default: cores − 1, at least 1, leaving a core to the event loop). */
  readonly maxThreads?: number;
  /** Tasks waiting for a thread at most (default 64). */
  readonly maxQueue?: number;
  /** Idle threads end after this long (default 30 s). */
  readonly idleTimeoutMs?: number;
  /** `read` requests gathered into one task at most (default 64). */
  readonly maxReadBatch?: number;
}

type WorkerTask = ScanTask | ReadTask;
type WorkerResult = ScanResult | ReadOutcome[];

/** A `readFiles` task being gathered: requests join it until it is handed to the pool. */
interface OpenBatch {
  readonly requests: ReadRequest[];
  readonly waiters: { resolve(outcome: ReadOutcome): void; reject(error: unknown): void }[];
}

/** The worker module, next to this file (plain JS: loads under tsx, vitest and node alike). */
const WORKER_URL = new URL('./worker.mjs', import.meta.url).href;

/**
 * A piscina pool running `worker.mjs`. Guarantees: at most `maxThreads` tasks run and
 * `maxQueue` wait; beyond that `scan` and `read` reject at once with `ToolError`
 * `pool_queue_full`; aborting a running scan's signal terminates the thread running it (so a
 * runaway regular expression is stopped) and rejects with the abort reason; `read` requests made
 * in the same turn of the event loop share one task (up to `maxReadBatch`), which counts as one
 * task against the bounds; after `close()` new work is refused with `pool_closed`.
 */
export class FileWorkerPool {
  private readonly pool: Piscina<WorkerTask, WorkerResult>;
  private closed = false;
  private accepted = 0;
  private openBatch: OpenBatch | null = null;
  private readonly maxReadBatch: number;
  /** The configured queue bound. */
  readonly maxQueue: number;
  /** The configured thread bound. */
  readonly maxThreads: number;

  constructor(options: FileWorkerPoolOptions = {}) {
    this.maxThreads = Math.max(1, options.maxThreads ?? availableParallelism() - 1);
    this.maxQueue = options.maxQueue ?? 64;
    this.maxReadBatch = Math.max(1, options.maxReadBatch ?? 64);
    this.pool = new Piscina<WorkerTask, WorkerResult>({
      filename: WORKER_URL,
      minThreads: 0,
      maxThreads: this.maxThreads,
      maxQueue: this.maxQueue,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
    });
  }

  /** Tasks accepted and not finished yet (running or waiting). */
  get pending(): number {
    return this.accepted;
  }

  /** Tasks waiting for a thread now. */
  get queueSize(): number {
    return Math.max(0, this.accepted - this.maxThreads);
  }

  /** Runs one scan task; see the class guarantees for the errors. */
  async scan(task: ScanTask, signal?: AbortSignal): Promise<ScanResult> {
    this.admit();
    this.accepted += 1;
    try {
      return (await this.run(task, signal === undefined ? {} : { signal })) as ScanResult;
    } finally {
      this.accepted -= 1;
    }
  }

  /**
   * Reads one file's line range in the pool (task kind `readFiles`), batched with the other
   * `read` requests of this turn of the event loop. Resolves with the request's outcome (a
   * refusal, binary or I/O failure is an outcome, not a rejection); rejects only for the pool
   * itself (`pool_queue_full`, `pool_closed`, a crashed thread). Not abortable: a read is bounded
   * by its `maxScan`, so the caller stops waiting instead.
   */
  read(request: ReadRequest): Promise<ReadOutcome> {
    return new Promise<ReadOutcome>((resolve, reject) => {
      let batch = this.openBatch;
      if (batch === null) {
        try {
          this.admit();
        } catch (error) {
          reject(error);
          return;
        }
        this.accepted += 1;
        const created: OpenBatch = { requests: [], waiters: [] };
        batch = created;
        this.openBatch = created;
        setImmediate(() => this.flush(created));
      }
      batch.requests.push(request);
      batch.waiters.push({ resolve, reject });
      if (batch.requests.length >= this.maxReadBatch) this.flush(batch);
    });
  }

  private flush(batch: OpenBatch): void {
    if (this.openBatch !== batch) return; // Already handed to the pool.
    this.openBatch = null;
    const task: ReadTask = { files: batch.requests };
    const settled = this.closed
      ? Promise.reject(new ToolError(ToolErrorCode.poolClosed, 'the file worker pool is closed'))
      : this.run(task, { name: 'readFiles' });
    settled
      .then(
        (result) => {
          const outcomes = result as ReadOutcome[];
          batch.waiters.forEach((waiter, i) => {
            const outcome = outcomes[i];
            if (outcome === undefined) waiter.reject(new Error('the file worker returned too few outcomes'));
            else waiter.resolve(outcome);
          });
        },
        (error: unknown) => {
          const reason = this.closed
            ? new ToolError(ToolErrorCode.poolClosed, 'the file worker pool is closed')
            : error;
          for (const waiter of batch.waiters) waiter.reject(reason);
        },
      )
      .finally(() => {
        this.accepted -= 1;
      });
  }

  /** Refuses new work when closed or full (checked before counting a new task). */
  private admit(): void {
    if (this.closed) throw new ToolError(ToolErrorCode.poolClosed, 'the file worker pool is closed');
    // Counted here rather than left to piscina, whose queue bound ignores tasks with a signal.
    if (this.accepted >= this.maxThreads + this.maxQueue) throw this.full();
  }

  private async run(
    task: WorkerTask,
    options: { readonly signal?: AbortSignal; readonly name?: string },
  ): Promise<WorkerResult> {
    try {
      return await this.pool.run(task, options);
    } catch (error) {
      if (error instanceof Error && error.message === 'Task queue is at limit') throw this.full();
      if (error instanceof Error && error.name === 'AbortError' && this.accepted > 1) this.restart();
      throw error;
    }
  }

  /**
   * Aborting a running task terminates its thread, and piscina replaces a terminated thread only
   * up to `minThreads` (0 here): tasks queued behind it would wait for the next `run` call. An
   * empty read task (which starts a thread when all are gone) gets them going again.
   */
  private restart(): void {
    if (this.closed) return;
    this.pool.run({ files: [] }, { name: 'readFiles' }).catch(() => {});
  }

  private full(): ToolError {
    return new ToolError(
      ToolErrorCode.poolQueueFull,
      `the file worker pool is busy (${this.maxQueue} tasks waiting); try again shortly`,
    );
  }

  /** Ends the threads; running tasks are aborted, and a read batch not yet sent is refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.openBatch !== null) this.flush(this.openBatch);
    await this.pool.close({ force: true });
  }
}
