/**
 * The Node implementation of the path guard's file-system interfaces. Every call is synchronous
 * (a policy decision is one synchronous evaluation) and turns every error into data.
 */
import * as fs from 'node:fs';
import type { EntryKind, ExecFs, FileIdentity, OpenResult } from './fs.ts';

function kindOf(stats: fs.Stats | fs.BigIntStats): EntryKind {
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  return 'other';
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return 'EUNKNOWN';
}

function lstatKind(path: string): EntryKind {
  try {
    const stats = fs.lstatSync(path, { throwIfNoEntry: false });
    return stats === undefined ? 'missing' : kindOf(stats);
  } catch (error) {
    // ENOTDIR: an ancestor is not a directory, so nothing can exist here.
    return errorCode(error) === 'ENOTDIR' ? 'missing' : 'error';
  }
}

function readlink(path: string): string | null {
  try {
    return fs.readlinkSync(path, 'utf8');
  } catch {
    return null;
  }
}

function list(path: string): readonly string[] | null {
  try {
    return fs.readdirSync(path, 'utf8');
  } catch {
    return null;
  }
}

function identity(stats: fs.BigIntStats | undefined): FileIdentity | null {
  return stats === undefined ? null : { dev: stats.dev, ino: stats.ino, kind: kindOf(stats) };
}

const NOFOLLOW = fs.constants.O_NOFOLLOW as number | undefined;
const NONBLOCK = (fs.constants.O_NONBLOCK as number | undefined) ?? 0;

function openNoFollow(path: string, mode: 'read' | 'write'): OpenResult {
  const base = mode === 'read' ? fs.constants.O_RDONLY : fs.constants.O_WRONLY | fs.constants.O_CREAT;
  if (NOFOLLOW === undefined) {
    // No O_NOFOLLOW (Windows): the best available is an lstat right before the open.
    if (lstatKind(path) === 'symlink') return { ok: false, code: 'ELOOP' };
  }
  try {
    return { ok: true, fd: fs.openSync(path, base | (NOFOLLOW ?? 0) | NONBLOCK, 0o666) };
  } catch (error) {
    return { ok: false, code: errorCode(error) };
  }
}

/**
 * The real file system through `node:fs`. Guarantees: `kind` and `identityOfPath` never follow a
 * final symlink; `openNoFollow` never opens through a final symlink where the OS has
 * `O_NOFOLLOW` (Linux, macOS, BSD) and never blocks on a FIFO; nothing throws.
 */
export const nodeFs: ExecFs = {
  kind: lstatKind,
  readlink,
  list,
  openNoFollow,
  identityOfFd(fd) {
    try {
      return identity(fs.fstatSync(fd, { bigint: true }));
    } catch {
      return null;
    }
  },
  identityOfPath(path) {
    try {
      return identity(fs.lstatSync(path, { bigint: true, throwIfNoEntry: false }));
    } catch {
      return null;
    }
  },
  pathOfFd(fd) {
    if (process.platform !== 'linux') return null;
    return readlink(`/proc/self/fd/${fd}`);
  },
  mkdirp(path) {
    try {
      fs.mkdirSync(path, { recursive: true });
      return true;
    } catch {
      return false;
    }
  },
  replaceContents(fd, data) {
    try {
      fs.ftruncateSync(fd, 0);
      let offset = 0;
      while (offset < data.byteLength) {
        offset += fs.writeSync(fd, data, offset, data.byteLength - offset, offset);
      }
      return true;
    } catch {
      return false;
    }
  },
  close(fd) {
    try {
      fs.closeSync(fd);
    } catch {
      // Closing is best effort: the descriptor is unusable either way.
    }
  },
};
