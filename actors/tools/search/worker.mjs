// The file worker (runs in a piscina pool thread). Plain JavaScript so that it loads the same
// way under tsx, vitest and plain node. Two task kinds, see protocol.ts: the default export
// (ScanTask -> ScanResult, for search_files) and `readFiles` (ReadTask -> ReadOutcome[], for
// read_file).
import { Buffer } from 'node:buffer';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
} from 'node:fs';
import { constants as osConstants, setPriority } from 'node:os';
import { join } from 'node:path';
import { LineRangeReader, READ_CHUNK } from './line-range.mjs';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const LINES_BETWEEN_CLOCK_CHECKS = 4096;

// Background work yields the CPU to the event loop: on Linux the nice value is per thread, so
// this lowers only this pool thread. Best effort (refused in some sandboxes; no effect elsewhere).
try {
  setPriority(osConstants.priority.PRIORITY_BELOW_NORMAL);
} catch {
  // Keep the default priority.
}

/**
 * Reads a regular file of at most `maxBytes`. Returns a Buffer, or a skip reason.
 * @param {string} path
 * @param {boolean} follow
 * @param {number} maxBytes
 * @returns {Buffer | 'large' | 'unreadable' | 'symlinks' | 'other'}
 */
function readSmallFile(path, follow, maxBytes) {
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | NONBLOCK | (follow ? 0 : NOFOLLOW));
  } catch (error) {
    return error && error.code === 'ELOOP' ? 'symlinks' : 'unreadable';
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return 'other';
    if (stats.size > maxBytes) return 'large';
    const buffer = Buffer.allocUnsafe(stats.size);
    let offset = 0;
    while (offset < stats.size) {
      const n = readSync(fd, buffer, offset, stats.size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return buffer.subarray(0, offset);
  } catch {
    return 'unreadable';
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs one scan task. Never throws for a file or directory problem (it is counted instead).
 * @param {import('./protocol.ts').ScanTask} task
 * @returns {import('./protocol.ts').ScanResult}
 */
export default function scan(task) {
  const regex = new RegExp(task.pattern, task.flags.replace(/[gy]/g, ''));
  const skipDirs = new Set(task.skipDirs);
  const skipped = { large: 0, binary: 0, unreadable: 0, symlinks: 0, other: 0 };
  const matches = [];
  const files = task.singleFile ? [''] : [...task.files];
  const dirs = task.singleFile ? [] : [...task.dirs];
  let filesScanned = 0;
  let bytesScanned = 0;
  let stoppedBy = null;

  const searchFile = (rel) => {
    const path = task.singleFile ? task.base : join(task.base, rel);
    const content = readSmallFile(path, task.singleFile, task.maxFileBytes);
    filesScanned += 1;
    if (typeof content === 'string') {
      skipped[content] += 1;
      return;
    }
    bytesScanned += content.length;
    if (content.subarray(0, 8192).includes(0)) {
      skipped.binary += 1;
      return;
    }
    const lines = content.toString('utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (i % LINES_BETWEEN_CLOCK_CHECKS === LINES_BETWEEN_CLOCK_CHECKS - 1 && Date.now() > task.deadline) {
        stoppedBy = 'deadline';
        return;
      }
      const line = lines[i];
      if (regex.test(line)) {
        matches.push({
          file: rel,
          line: i + 1,
          text: line.length > task.maxLineChars ? line.slice(0, task.maxLineChars) : line,
        });
        if (matches.length >= task.maxMatches) {
          stoppedBy = 'matches';
          return;
        }
      }
    }
  };

  const walkDir = (rel) => {
    let entries;
    try {
      entries = readdirSync(rel === '' ? task.base : join(task.base, rel), { withFileTypes: true });
    } catch {
      skipped.unreadable += 1;
      return;
    }
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) skipped.symlinks += 1;
      else if (entry.isDirectory()) {
        if (!skipDirs.has(entry.name)) dirs.push(child);
      } else if (entry.isFile()) files.push(child);
      else skipped.other += 1;
    }
  };

  while (stoppedBy === null && (files.length > 0 || dirs.length > 0)) {
    if (Date.now() > task.deadline) {
      stoppedBy = 'deadline';
      break;
    }
    if (files.length > 0) {
      if (filesScanned >= task.maxFiles) break;
      searchFile(files.pop());
    } else {
      walkDir(dirs.pop());
    }
  }
  return { matches, filesScanned, bytesScanned, skipped, pendingDirs: dirs, pendingFiles: files, stoppedBy };
}

/**
 * A refusal shaped as `openAtExecution` reports it.
 * @param {string} rule
 * @param {string} message
 * @param {string} [osCode]
 * @returns {import('./protocol.ts').ReadOutcome}
 */
function refused(rule, message, osCode) {
  const base = { ok: false, kind: 'refused', reason: 'invalid_path', rule, message };
  return osCode === undefined ? base : { ...base, osCode };
}

/**
 * Opens the checked path as `nodeFs.openNoFollow` does for a read: never through a final
 * symlink (`O_NOFOLLOW`; where the platform lacks it, an lstat right before the open), never
 * blocking on a FIFO.
 * @param {string} path
 * @returns {{ fd: number } | { code: string }}
 */
function openNoFollow(path) {
  if (constants.O_NOFOLLOW === undefined) {
    try {
      if (lstatSync(path).isSymbolicLink()) return { code: 'ELOOP' };
    } catch (error) {
      return { code: (error && error.code) || 'EUNKNOWN' };
    }
  }
  try {
    return { fd: openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK) };
  } catch (error) {
    return { code: (error && error.code) || 'EUNKNOWN' };
  }
}

/**
 * Reads one request: opens the path without following a final symlink, verifies that the
 * descriptor is the regular file the main thread verified (same device and inode, and on Linux
 * the kernel's path of the descriptor is the checked path), then collects the line range.
 * @param {import('./protocol.ts').ReadRequest} request
 * @param {Buffer} buffer
 * @returns {import('./protocol.ts').ReadOutcome}
 */
function readOne(request, buffer) {
  const opened = openNoFollow(request.path);
  if ('code' in opened) {
    if (opened.code === 'ELOOP' || opened.code === 'EMLINK') {
      return refused('roots.open-mismatch', 'the final component became a symlink', opened.code);
    }
    return refused('roots.io-failed', `the open failed (${opened.code})`, opened.code);
  }
  const fd = opened.fd;
  try {
    let stats;
    try {
      stats = fstatSync(fd, { bigint: true });
    } catch {
      return refused('roots.open-mismatch', 'the opened file is not the one at the checked path');
    }
    if (!stats.isFile()) return refused('roots.not-a-regular-file', 'not a regular file');
    if (String(stats.dev) !== request.dev || String(stats.ino) !== request.ino) {
      return refused('roots.open-mismatch', 'the opened file is not the one at the checked path');
    }
    if (process.platform === 'linux') {
      let kernelPath = null;
      try {
        kernelPath = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // No /proc: the device and inode comparison stands alone, as in openAtExecution.
      }
      if (kernelPath !== null && kernelPath !== request.path) {
        return refused('roots.open-mismatch', 'the opened file is not the one at the checked path');
      }
    }
    const reader = new LineRangeReader(
      request.startLine,
      request.lastWanted,
      request.maxBytes,
      request.maxScan,
    );
    for (;;) {
      const length = reader.nextLength();
      if (length === 0) break;
      let n;
      try {
        n = readSync(fd, buffer, 0, length, reader.position);
      } catch {
        return { ok: false, kind: 'io_failed', message: 'the read failed' };
      }
      const state = reader.accept(buffer.subarray(0, n));
      if (state === 'binary') {
        return { ok: false, kind: 'binary_file', message: 'the file looks binary (it contains NUL bytes)' };
      }
      if (state === 'done') break;
    }
    return { ok: true, result: reader.finish() };
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs one batch of `read_file` requests, in order. Never throws for a file problem: each
 * request gets its own outcome.
 * @param {import('./protocol.ts').ReadTask} task
 * @returns {import('./protocol.ts').ReadOutcome[]}
 */
export function readFiles(task) {
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  return task.files.map((request) => readOne(request, buffer));
}
