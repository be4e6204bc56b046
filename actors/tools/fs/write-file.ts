/** `write_file {path, content}`: create or replace a file atomically. */
import { ToolErrorCode } from '../codes.ts';
import { decidedTarget, executionGuard, throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { atomicWriteAtExecution, type AtomicWriteResult } from './atomic-write.ts';

/** Limits of `write_file`. */
export interface WriteFileOptions {
  /** Largest content accepted, in UTF-8 bytes (default 10 MiB). */
  readonly maxBytes?: number;
}

/**
 * Creates the `write_file` executor. Guarantees: content over `maxBytes` is refused
 * (`content_too_large`) before anything is touched; the write is atomic and re-checked as
 * `atomicWriteAtExecution` describes; missing parent directories inside the root are created.
 */
export function createWriteFileExecutor(options: WriteFileOptions = {}): ToolExecutor {
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<AtomicWriteResult> {
      const data = Buffer.from(String(args.content), 'utf8');
      if (data.byteLength > maxBytes) {
        throw new ToolError(ToolErrorCode.contentTooLarge, `the content is larger than ${maxBytes} bytes`);
      }
      throwIfCancelled(ctx.signal);
      const guard = executionGuard(ctx);
      return atomicWriteAtExecution(decidedTarget(ctx, 'path'), ctx.roots, guard, data, {
        createParents: true,
      });
    },
  };
}
