/** `read_file {path, startLine?, endLine?}`: a line range of a text file, size-capped. */
import { openAtExecution, nodeFs, type ExecFs } from '../../../policy/paths/index.ts';
import { ToolErrorCode } from '../codes.ts';
import { decidedTarget, executionGuard, refusalError, throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { looksBinary, readAt } from './fd-io.ts';

/** Limits of `read_file`. */
export interface ReadFileOptions {
  /** Bytes of content returned at most (default 256 KiB); more sets `truncated`. */
  readonly maxBytes?: number;
  /** Bytes read at most to reach the requested lines (default 64 MiB). */
  readonly maxScanBytes?: number;
  /** File system for the verified open (default the real one). */
  readonly execFs?: ExecFs;
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

const CHUNK = 64 * 1024;

/**
 * Creates the `read_file` executor. Guarantees: the file is opened only through
 * `openAtExecution` (re-checked, final component never a symlink, descriptor verified); binary
 * files (a NUL byte in the first chunk) are refused with `binary_file`; at most `maxBytes` of
 * content is returned and at most `maxScanBytes` read; lines are 1-based and inclusive.
 */
export function createReadFileExecutor(options: ReadFileOptions = {}): ToolExecutor {
  const maxBytes = options.maxBytes ?? 256 * 1024;
  const maxScan = options.maxScanBytes ?? 64 * 1024 * 1024;
  const execFs = options.execFs ?? nodeFs;
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
      try {
        return await readLines(opened.fd, opened.path, startLine, lastWanted, maxBytes, maxScan, ctx.signal);
      } finally {
        execFs.close(opened.fd);
      }
    },
  };
}

async function readLines(
  fd: number,
  path: string,
  startLine: number,
  lastWanted: number,
  maxBytes: number,
  maxScan: number,
  signal: AbortSignal,
): Promise<ReadFileResult> {
  const decoder = new TextDecoder('utf-8');
  const kept: string[] = [];
  let keptBytes = 0;
  let line = 1;
  let partial = '';
  let position = 0;
  let truncated = false;
  let endLine: number | null = null;
  let atEnd = false;
  const take = (text: string, n: number): boolean => {
    if (n < startLine || n > lastWanted) return true;
    const size = Buffer.byteLength(text) + 1;
    if (keptBytes + size > maxBytes) {
      truncated = true;
      return false;
    }
    kept.push(text);
    keptBytes += size;
    endLine = n;
    return true;
  };
  const buffer = Buffer.allocUnsafe(CHUNK);
  outer: for (;;) {
    throwIfCancelled(signal);
    if (position >= maxScan) {
      truncated = true;
      break;
    }
    let n: number;
    try {
      n = await readAt(fd, buffer, Math.min(CHUNK, maxScan - position), position);
    } catch {
      throw new ToolError(ToolErrorCode.ioFailed, 'the read failed');
    }
    if (position === 0 && looksBinary(buffer.subarray(0, Math.min(n, 8192)))) {
      throw new ToolError(ToolErrorCode.binaryFile, 'the file looks binary (it contains NUL bytes)');
    }
    if (n === 0) {
      partial += decoder.decode();
      atEnd = true;
      break;
    }
    position += n;
    const parts = (partial + decoder.decode(buffer.subarray(0, n), { stream: true })).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      if (!take(text, line)) break outer;
      line += 1;
      if (line > lastWanted) break outer;
    }
  }
  let totalLines: number | null = null;
  if (atEnd) {
    if (partial.length > 0) {
      take(partial, line);
      line += 1;
    }
    totalLines = line - 1;
  }
  return { path, content: kept.join('\n'), startLine, endLine, totalLines, truncated };
}
