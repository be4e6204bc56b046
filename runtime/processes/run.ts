/**
 * Running one command to completion on top of the supervisor: output capped per stream, a
 * wall-clock timeout and cancellation, each of which ends the whole process tree.
 */
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { ProcessRunRequest, ProcessRunResult } from '../../actors/tools/process-runner.ts';
import type { SpawnRequest, SupervisedChild } from './child.ts';

/** Keeps the first `limit` bytes written to it and counts the rest. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte seen, kept or dropped. */
  total = 0;

  constructor(private readonly limit: number) {}

  /** Adds a chunk, keeping only what fits under the limit. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** Whether anything was dropped. */
  get truncated(): boolean {
    return this.total > this.kept;
  }

  /** The kept bytes as UTF-8 text (a sequence cut at the limit becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function closed(stream: Readable, ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.readableEnded) return resolve();
    const timer = setTimeout(() => {
      stream.destroy();
      resolve();
    }, ms);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The part of the supervisor `runToCompletion` needs. */
export interface Spawner {
  spawn(request: SpawnRequest): SupervisedChild;
}

/**
 * Runs `request` to completion. Guarantees: when the timeout passes or `request.signal` aborts,
 * the whole tree is ended (SIGTERM, SIGKILL after the grace period) and the result says so (a
 * program that exited 0 before the cut finished, and is reported as such); the
 * promise settles only after the main program exited and its group was ended; at most
 * `maxOutputBytes` of each stream is kept. Rejects only when the child cannot be started.
 */
export async function runToCompletion(
  spawner: Spawner,
  request: ProcessRunRequest,
): Promise<ProcessRunResult> {
  const started = performance.now();
  const out = new CappedBuffer(request.maxOutputBytes);
  const err = new CappedBuffer(request.maxOutputBytes);
  if (request.signal?.aborted === true) {
    return result(null, null, out, err, false, true, started);
  }
  const child = spawner.spawn({
    command: request.command,
    args: request.args,
    cwd: request.cwd,
    ...(request.env === undefined ? {} : { env: request.env }),
  });
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void child.terminate();
  }, request.timeoutMs);
  const onAbort = (): void => {
    cancelled = true;
    void child.terminate();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await child.exited;
    // What ended the program is settled at its exit: a cancel or timeout that comes while the
    // group is being reaped did not cut it, and a program that exited 0 finished its work.
    const clean = exit.exitCode === 0 && exit.signal === null;
    const cutByTimeout = timedOut && !clean;
    const cutByCancel = cancelled && !clean;
    await child.finished;
    await Promise.all([closed(child.stdout, 1000), closed(child.stderr, 1000)]);
    return result(exit.exitCode, exit.signal, out, err, cutByTimeout, cutByCancel, started);
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
}

function result(
  exitCode: number | null,
  signal: string | null,
  out: CappedBuffer,
  err: CappedBuffer,
  timedOut: boolean,
  cancelled: boolean,
  started: number,
): ProcessRunResult {
  return {
    exitCode,
    signal,
    stdout: out.text(),
    stderr: err.text(),
    outputBytes: out.total + err.total,
    truncated: out.truncated || err.truncated,
    timedOut,
    cancelled,
    durationMs: Math.round(performance.now() - started),
  };
}
