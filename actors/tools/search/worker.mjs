// The search worker (runs in a piscina pool thread). Plain JavaScript so that it loads the same
// way under tsx, vitest and plain node. Types: see protocol.ts (ScanTask -> ScanResult).
import { Buffer } from 'node:buffer';
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { constants as osConstants, setPriority } from 'node:os';
import { join } from 'node:path';

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
