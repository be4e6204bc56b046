/** `edit_file {path, old, new}`: replace one exact occurrence of a text, atomically. */
import * as fs from 'node:fs';
import { nodeFs, openAtExecution, type ExecFs } from '../../../policy/paths/index.ts';
import { ToolErrorCode } from '../codes.ts';
import { decidedTarget, executionGuard, refusalError, throwIfCancelled } from '../paths.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from '../types.ts';
import { atomicWriteAtExecution, stampOf, type FileStamp } from './atomic-write.ts';
import { looksBinary, readAllCapped } from './fd-io.ts';

/** Limits of `edit_file`. */
export interface EditFileOptions {
  /** Largest file edited, in bytes (default 10 MiB). */
  readonly maxBytes?: number;
  readonly execFs?: ExecFs;
}

/** The result of `edit_file`. */
export interface EditFileResult {
  readonly path: string;
  /** 1-based line where the replaced text started. */
  readonly line: number;
  readonly bytes: number;
}

/**
 * Creates the `edit_file` executor. Guarantees: `old` must occur exactly once (else
 * `edit_old_not_found` / `edit_old_ambiguous`, nothing written); the file is read through a
 * verified descriptor and replaced atomically only if it is still the same file, unchanged
 * since it was read (`file_changed_during_edit` otherwise).
 */
export function createEditFileExecutor(options: EditFileOptions = {}): ToolExecutor {
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const execFs = options.execFs ?? nodeFs;
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<EditFileResult> {
      const oldText = String(args.old);
      const newText = String(args.new);
      if (oldText.length === 0) throw new ToolError(ToolErrorCode.editNotFound, '"old" must not be empty');
      throwIfCancelled(ctx.signal);
      const guard = executionGuard(ctx);
      const target = decidedTarget(ctx, 'path');
      const { text, stamp } = await readCurrent(target, ctx, guard, execFs, maxBytes);
      const at = text.indexOf(oldText);
      if (at < 0) throw new ToolError(ToolErrorCode.editNotFound, 'the text to replace was not found');
      if (text.indexOf(oldText, at + 1) >= 0) {
        throw new ToolError(ToolErrorCode.editAmbiguous, 'the text to replace occurs more than once');
      }
      const updated = text.slice(0, at) + newText + text.slice(at + oldText.length);
      const data = Buffer.from(updated, 'utf8');
      if (data.byteLength > maxBytes) {
        throw new ToolError(ToolErrorCode.contentTooLarge, `the edited file would exceed ${maxBytes} bytes`);
      }
      throwIfCancelled(ctx.signal);
      const written = await atomicWriteAtExecution(target, ctx.roots, guard, data, { expect: stamp });
      const line = text.slice(0, at).split('\n').length;
      return { path: written.path, line, bytes: written.bytes };
    },
  };
}

async function readCurrent(
  target: ReturnType<typeof decidedTarget>,
  ctx: ToolExecutionContext,
  guard: ReturnType<typeof executionGuard>,
  execFs: ExecFs,
  maxBytes: number,
): Promise<{ text: string; stamp: FileStamp }> {
  const opened = openAtExecution(target, 'read', ctx.roots, guard, execFs);
  if (!opened.ok) throw refusalError(opened);
  try {
    const stamp = stampOf(fs.fstatSync(opened.fd, { bigint: true }));
    const content = await readAllCapped(opened.fd, maxBytes);
    if (content === null)
      throw new ToolError(ToolErrorCode.fileTooLarge, `the file is larger than ${maxBytes} bytes`);
    if (looksBinary(content.subarray(0, 8192))) {
      throw new ToolError(ToolErrorCode.binaryFile, 'the file looks binary (it contains NUL bytes)');
    }
    return { text: content.toString('utf8'), stamp };
  } finally {
    execFs.close(opened.fd);
  }
}
