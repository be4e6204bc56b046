/**
 * Atomic replacement of a decided file: write a temp file in the same (pinned) directory, then
 * rename it over the target. Readers see the old or the new contents, never a mix, and a
 * directory or symlink swapped in after the decision is refused, never followed.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Target } from '../../../policy/decision.ts';
import { recheckAtExecution, type SnotraPathGuard } from '../../../policy/paths/index.ts';
import type { WorkspaceRoot } from '../../../policy/roots.ts';
import { ToolErrorCode } from '../codes.ts';
import { refusalError } from '../paths.ts';
import { ToolError } from '../types.ts';
import { writeAll } from './fd-io.ts';
import { pinDirectory, type PinnedDirectory } from './pinned-dir.ts';

/** Identity and version of a file as read, to detect a change before replacing it. */
export interface FileStamp {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
}

/** The stamp of `stats`. */
export function stampOf(stats: fs.BigIntStats): FileStamp {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/** Options of `atomicWriteAtExecution`. */
export interface AtomicWriteOptions {
  /** Create missing parent directories (inside the root) first. */
  readonly createParents?: boolean;
  /** The file must still be exactly this one (edit_file): otherwise `file_changed_during_edit`. */
  readonly expect?: FileStamp;
}

/** Outcome of a successful atomic write. */
export interface AtomicWriteResult {
  readonly path: string;
  readonly created: boolean;
  readonly bytes: number;
}

function recheck(target: Target, roots: readonly WorkspaceRoot[], guard: SnotraPathGuard): string {
  const result = recheckAtExecution(target, 'write', roots, guard);
  if (!result.ok) throw refusalError(result);
  return result.path;
}

function unlinkQuietly(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // Already gone, or the directory went away with it.
  }
}

function mismatch(): ToolError {
  return new ToolError('invalid_path', 'refused at execution: the directory changed after the decision', {
    details: { rule: 'roots.open-mismatch' },
  });
}

/**
 * Replaces the decided target's contents with `data` atomically. Guarantees: the target is
 * re-checked (`recheckAtExecution`) before anything is created, again once its directory is
 * pinned, and a third time right before the rename; the temp file is created exclusively
 * (`O_EXCL | O_NOFOLLOW`) in that pinned directory and renamed within it, so a symlink or
 * directory swapped in after the decision is refused and never followed; an existing file's
 * permission bits are kept; on any failure the temp file is removed and the target untouched.
 * Remaining window: `createParents` creates directories by path before the pin (as
 * `openAtExecution` does); on platforms without `/proc` the directory is reached by path and
 * checked with `stillAt()` right before the rename instead of being pinned.
 */
export async function atomicWriteAtExecution(
  target: Target,
  roots: readonly WorkspaceRoot[],
  guard: SnotraPathGuard,
  data: Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<AtomicWriteResult> {
  const path = recheck(target, roots, guard);
  const parent = dirname(path);
  const name = basename(path);
  if (options.createParents === true) {
    try {
      fs.mkdirSync(parent, { recursive: true });
    } catch {
      throw new ToolError(ToolErrorCode.ioFailed, 'cannot create the parent directories');
    }
  }
  const dir = pinDirectory(parent);
  if (dir === null) throw mismatch();
  try {
    if (recheck(target, roots, guard) !== path) throw mismatch();
    return await writeInPinned(dir, name, path, data, options, () => {
      if (!dir.stillAt() || recheck(target, roots, guard) !== path) throw mismatch();
    });
  } finally {
    dir.close();
  }
}

async function writeInPinned(
  dir: PinnedDirectory,
  name: string,
  path: string,
  data: Uint8Array,
  options: AtomicWriteOptions,
  verify: () => void,
): Promise<AtomicWriteResult> {
  const existing = fs.lstatSync(dir.entry(name), { bigint: true, throwIfNoEntry: false });
  if (existing !== undefined && !existing.isFile()) {
    throw new ToolError(ToolErrorCode.notAFile, 'the target exists and is not a regular file');
  }
  if (
    options.expect !== undefined &&
    (existing === undefined || !sameStamp(options.expect, stampOf(existing)))
  ) {
    throw new ToolError(ToolErrorCode.fileChanged, 'the file changed between reading and writing it');
  }
  const mode = existing === undefined ? undefined : Number(existing.mode & 0o7777n);
  const tempPath = dir.entry(`.snotra-${randomBytes(8).toString('hex')}.tmp`);
  const flags =
    fs.constants.O_WRONLY |
    fs.constants.O_CREAT |
    fs.constants.O_EXCL |
    ((fs.constants.O_NOFOLLOW as number | undefined) ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(tempPath, flags, mode ?? 0o666);
  } catch {
    throw new ToolError(ToolErrorCode.ioFailed, 'cannot create the temporary file next to the target');
  }
  try {
    await writeAll(fd, data);
    if (mode !== undefined) fs.fchmodSync(fd, mode);
    fs.fsyncSync(fd);
  } catch {
    fs.closeSync(fd);
    unlinkQuietly(tempPath);
    throw new ToolError(ToolErrorCode.ioFailed, 'the write failed');
  }
  fs.closeSync(fd);
  try {
    verify();
    fs.renameSync(tempPath, dir.entry(name));
  } catch (error) {
    unlinkQuietly(tempPath);
    if (error instanceof ToolError) throw error;
    throw new ToolError(ToolErrorCode.ioFailed, 'the rename over the target failed');
  }
  return { path, created: existing === undefined, bytes: data.byteLength };
}
