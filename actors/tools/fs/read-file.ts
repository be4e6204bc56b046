/** `read_file {path, startLine?, endLine?}`: a line range of a text file, size-capped. */
import { openAtExecution, nodeFs, type ExecFs } from '../../../policy/paths/index.ts';
import { ToolErrorCode } from '../codes.ts';
import { decidedTarget, executionGuard, refusalError, throwIfCancelled } from '../paths.ts';
import { LineRangeReader, READ_CHUNK } from '../search/line-range.mjs';
import type { FileWorkerPool } from '../search/pool.ts';
import type { LineRangeResult, ReadOutcome } from '../search/protocol.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { readAt } from './fd-io.ts';

/** Limits of `read_file`. */
export interface ReadFileOptions {
  /**
   * Bytes of content returned at most (default 48 KiB, so the lines it reports fit the 64 KiB
   * observation the model sees, JSON escapes included); more sets `truncated`.
   */
  readonly maxBytes?: number;
  /** Bytes read at most to reach the requested lines (default 64 MiB). */
  readonly maxScanBytes?: number;
  /** File system for the verified open (default the real one). */
  readonly execFs?: ExecFs;
  /**
   * The worker pool to read in (task kind `readFiles`, batched). Without one, the read runs on
   * the main thread with asynchronous I/O. The pool always reads the real file system: an
   * `execFs` that is not backed by it makes every pooled read a refusal.
   */
  readonly pool?: FileWorkerPool;
}

/** The result of `read_file`. */
export interface ReadFileResult {
  readonly path: string;
  readonly content: string;
  readonly startLine: number;
  /** Last line included, or null when no line was in range. */
  readonly endLine: number | null;
  /** Lines in the file, or null when reading stopped before the end. */
  readonly totalLines: number | null;
  readonly truncated: boolean;
}

interface Limits {
  readonly maxBytes: number;
  readonly maxScan: number;
}

/**
 * Creates the `read_file` executor. Guarantees: the file is opened only through
 * `openAtExecution` (re-checked, final component never a symlink, descriptor verified); binary
 * files (a NUL byte in the first 8 KiB) are refused with `binary_file`; at most `maxBytes` of
 * content is returned and at most `maxScanBytes` read; lines are 1-based and inclusive.
 *
 * With `pool`, the same result, caps and errors: the main thread still re-checks and opens
 * through `openAtExecution` and keeps that verified descriptor open while the worker reads; the
 * worker opens the checked path again with `O_NOFOLLOW` and reads only when its descriptor is
 * the regular file verified on the main thread (same device and inode, and on Linux the same
 * kernel path), otherwise the call is refused with `invalid_path` (rule `roots.open-mismatch`,
 * or `roots.io-failed` when the path is gone). So a swap after the main thread's last check is
 * refused through the pool, where the main-thread path reads on through its verified descriptor:
 * neither ever reads anything but the verified file. A cancelled call stops waiting at once; the
 * worker's bounded read finishes and is discarded.
 */
export function createReadFileExecutor(options: ReadFileOptions = {}): ToolExecutor {
  const limits: Limits = {
    maxBytes: options.maxBytes ?? 48 * 1024,
    maxScan: options.maxScanBytes ?? 64 * 1024 * 1024,
  };
  const execFs = options.execFs ?? nodeFs;
  const pool = options.pool;
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<ReadFileResult> {
      const startLine = typeof args.startLine === 'number' ? args.startLine : 1;
      const lastWanted = typeof args.endLine === 'number' ? args.endLine : Number.POSITIVE_INFINITY;
      if (lastWanted < startLine) {
        throw new ToolError(ToolErrorCode.invalidLineRange, 'endLine is before startLine');
      }
      throwIfCancelled(ctx.signal);
      const guard = executionGuard(ctx);
      const opened = openAtExecution(decidedTarget(ctx, 'path'), 'read', ctx.roots, guard, execFs);
      if (!opened.ok) throw refusalError(opened);
      if (pool !== undefined) {
        return readInPool(pool, execFs, opened.fd, opened.path, startLine, lastWanted, limits, ctx.signal);
      }
      try {
        const lines = await readLines(opened.fd, startLine, lastWanted, limits, ctx.signal);
        return { path: opened.path, ...lines };
      } finally {
        execFs.close(opened.fd);
      }
    },
  };
}

/**
 * Hands the verified file to the pool. The verified descriptor `fd` stays open until the worker
 * is done (even when the call is cancelled earlier), so the inode the worker compares against
 * cannot be freed and reused meanwhile.
 */
async function readInPool(
  pool: FileWorkerPool,
  execFs: ExecFs,
  fd: number,
  path: string,
  startLine: number,
  lastWanted: number,
  limits: Limits,
  signal: AbortSignal,
): Promise<ReadFileResult> {
  let work: Promise<ReadOutcome>;
  try {
    const identity = execFs.identityOfFd(fd);
    if (identity === null) throw new ToolError(ToolErrorCode.ioFailed, 'the read failed');
    work = pool.read({
      path,
      dev: String(identity.dev),
      ino: String(identity.ino),
      startLine,
      lastWanted,
      maxBytes: limits.maxBytes,
      maxScan: limits.maxScan,
    });
  } catch (error) {
    execFs.close(fd);
    throw error;
  }
  const done = work.finally(() => execFs.close(fd));
  let stopWaiting = (): void => {};
  const cancelled = new Promise<never>((_, reject) => {
    stopWaiting = whenAborted(signal, () =>
      reject(new ToolError(ToolErrorCode.cancelled, 'the call was cancelled')),
    );
  });
  done.catch(() => {});
  cancelled.catch(() => {});
  try {
    const outcome = await Promise.race([done, cancelled]);
    if (outcome.ok) return { path, ...outcome.result };
    if (outcome.kind === 'refused') {
      throw refusalError({ reason: outcome.reason, rule: { id: outcome.rule }, message: outcome.message });
    }
    throw new ToolError(
      outcome.kind === 'binary_file' ? ToolErrorCode.binaryFile : ToolErrorCode.ioFailed,
      outcome.message,
    );
  } finally {
    stopWaiting();
  }
}

/** Callbacks waiting for each signal: one listener per signal, however many calls share it. */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts (at once when it already has); returns the function
 * that stops waiting. The runtime hands one signal to every call, so a listener per call would
 * pile up (and trip Node's listener-leak warning) when many reads wait in the pool.
 */
function whenAborted(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  let waiters = abortWaiters.get(signal);
  if (waiters === undefined) {
    const created = new Set<() => void>();
    waiters = created;
    abortWaiters.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        abortWaiters.delete(signal);
        for (const waiter of created) waiter();
      },
      { once: true },
    );
  }
  const own = waiters;
  own.add(callback);
  return () => {
    own.delete(callback);
  };
}

async function readLines(
  fd: number,
  startLine: number,
  lastWanted: number,
  limits: Limits,
  signal: AbortSignal,
): Promise<LineRangeResult> {
  const reader = new LineRangeReader(startLine, lastWanted, limits.maxBytes, limits.maxScan);
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  for (;;) {
    throwIfCancelled(signal);
    const length = reader.nextLength();
    if (length === 0) break;
    let n: number;
    try {
      n = await readAt(fd, buffer, length, reader.position);
    } catch {
      throw new ToolError(ToolErrorCode.ioFailed, 'the read failed');
    }
    const state = reader.accept(buffer.subarray(0, n));
    if (state === 'binary') {
      throw new ToolError(ToolErrorCode.binaryFile, 'the file looks binary (it contains NUL bytes)');
    }
    if (state === 'done') break;
  }
  return reader.finish();
}
