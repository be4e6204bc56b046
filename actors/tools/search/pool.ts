/**
 * The worker pool file tools run their heavy work in, so a large search never blocks the event
 * loop of the actor system. A bounded queue: when it is full, new work is refused at once with
 * `pool_queue_full` rather than piling up.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ToolErrorCode } from '../codes.ts';
import { ToolError } from '../types.ts';
import type { ScanResult, ScanTask } from './protocol.ts';

/** Options of `FileWorkerPool`. */
export interface FileWorkerPoolOptions {
  /** Threads at most (default: cores − 1, at least 1, leaving a core to the event loop). */
  readonly maxThreads?: number;
  /** Tasks waiting for a thread at most (default 64). */
  readonly maxQueue?: number;
  /** Idle threads end after this long (default 30 s). */
  readonly idleTimeoutMs?: number;
}

/** The worker module, next to this file (plain JS: loads under tsx, vitest and node alike). */
const WORKER_URL = new URL('./worker.mjs', import.meta.url).href;

/**
 * A piscina pool running `worker.mjs`. Guarantees: at most `maxThreads` tasks run and
 * `maxQueue` wait; beyond that `scan` rejects at once with `ToolError` `pool_queue_full`; aborting a running task's signal terminates
 * the thread running it (so a runaway regular expression is stopped) and rejects with the abort
 * reason; after `close()` new work is refused with `pool_closed`.
 */
export class FileWorkerPool {
  private readonly pool: Piscina<ScanTask, ScanResult>;
  private closed = false;
  private accepted = 0;
  /** The configured queue bound. */
  readonly maxQueue: number;
  /** The configured thread bound. */
  readonly maxThreads: number;

  constructor(options: FileWorkerPoolOptions = {}) {
    this.maxThreads = Math.max(1, options.maxThreads ?? availableParallelism() - 1);
    this.maxQueue = options.maxQueue ?? 64;
    this.pool = new Piscina<ScanTask, ScanResult>({
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
    if (this.closed) throw new ToolError(ToolErrorCode.poolClosed, 'the file worker pool is closed');
    // Counted here rather than left to piscina, whose queue bound ignores tasks with a signal.
    if (this.accepted >= this.maxThreads + this.maxQueue) throw this.full();
    this.accepted += 1;
    try {
      return await this.pool.run(task, signal === undefined ? {} : { signal });
    } catch (error) {
      if (error instanceof Error && error.message === 'Task queue is at limit') throw this.full();
      throw error;
    } finally {
      this.accepted -= 1;
    }
  }

  private full(): ToolError {
    return new ToolError(
      ToolErrorCode.poolQueueFull,
      `the file worker pool is busy (${this.maxQueue} tasks waiting); try again shortly`,
    );
  }

  /** Ends the threads; running tasks are aborted. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close({ force: true });
  }
}
