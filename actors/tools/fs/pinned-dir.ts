/**
 * Pinning a checked directory: open it once (never through a final symlink), verify the
 * descriptor is the directory now at the checked path, and from then on reach entries through
 * the descriptor (`/proc/self/fd/N/…` on Linux), so a later swap of the path for a symlink
 * cannot redirect the access. Where the platform cannot pin (no `O_DIRECTORY` or no `/proc`),
 * entries are reached by path and `stillAt()` narrows the window instead.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';

/** A directory verified to be at `path`, with `via` the prefix to reach its entries by. */
export interface PinnedDirectory {
  readonly path: string;
  /** `/proc/self/fd/N` on Linux (bound to the opened directory), else `path` itself. */
  readonly via: string;
  /** Whether the platform pinned the directory (entries cannot be redirected by a swap). */
  readonly pinned: boolean;
  /** The entry `name` of the directory, reached through `via`. */
  entry(name: string): string;
  /** Whether the object at `path` is still the opened directory (same device and inode). */
  stillAt(): boolean;
  close(): void;
}

const O_DIRECTORY = fs.constants.O_DIRECTORY as number | undefined;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW as number | undefined;

function same(a: fs.BigIntStats | undefined, b: fs.BigIntStats | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

function lstat(path: string): fs.BigIntStats | undefined {
  try {
    return fs.lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * Opens and verifies the directory at the canonical path `path`. Returns null when it is not a
 * directory, is reached through a symlink, or is not the object at `path` any more.
 */
export function pinDirectory(path: string): PinnedDirectory | null {
  const canPin = process.platform === 'linux' && O_DIRECTORY !== undefined && O_NOFOLLOW !== undefined;
  if (!canPin) {
    const first = lstat(path);
    if (first === undefined || !first.isDirectory()) return null;
    return {
      path,
      via: path,
      pinned: false,
      entry: (name) => join(path, name),
      stillAt: () => same(first, lstat(path)),
      close: () => {},
    };
  }
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return null;
  }
  const release = (): null => {
    try {
      fs.closeSync(fd);
    } catch {
      // Nothing to do: the descriptor is unusable either way.
    }
    return null;
  };
  let byFd: fs.BigIntStats;
  let kernelPath: string;
  try {
    byFd = fs.fstatSync(fd, { bigint: true });
    kernelPath = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return release();
  }
  if (!byFd.isDirectory() || kernelPath !== path || !same(byFd, lstat(path))) return release();
  const via = `/proc/self/fd/${fd}`;
  let open = true;
  return {
    path,
    via,
    pinned: true,
    entry: (name) => `${via}/${name}`,
    stillAt: () => same(byFd, lstat(path)),
    close: () => {
      if (!open) return;
      open = false;
      release();
    },
  };
}
