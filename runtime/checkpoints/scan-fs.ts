/**
 * What a scan reads of a file's metadata, and the file system's own clock, behind one small
 * interface (the real one here; a test gives one whose timestamps have a coarse granularity it
 * advances, to show the racy-timestamp rule deterministically on any kernel).
 *
 * The racy-timestamp rule (git's "racily clean" entries): a file changed in the same timestamp
 * tick as the scan that recorded it can change again later without changing its size, mtime,
 * ctime or inode, so such an entry proves nothing. A scan therefore takes the file system's time
 * when it starts (the timestamps of a marker file it writes in the store's folder: the same clock
 * and granularity as the files' own), and remembers a file's stat only when both its mtime and
 * its ctime are strictly older than that; any other file is read again by the next scan.
 */
import { lstatSync, mkdirSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/** The file whose timestamps are a scan's start, in the store's folder. */
export const SCAN_CLOCK_FILE = 'scan-clock';

/** A scan's view of the file system's metadata and clock. */
export interface ScanFs {
  /** `lstat`, or undefined when nothing is there. */
  lstat(path: string): Stats | undefined;
  /**
   * The file system's time now, at its timestamp granularity (used as a scan's start); Infinity
   * when it cannot be told, so nothing is trusted.
   */
  now(storeDir: string): number;
}

let counter = 0;

/** The real file system: the marker's timestamps after writing it are the scan's start. */
export const realScanFs: ScanFs = {
  lstat: (path) => lstatSync(path, { throwIfNoEntry: false }),
  now(storeDir) {
    try {
      mkdirSync(storeDir, { recursive: true, mode: 0o700 });
      const marker = join(storeDir, SCAN_CLOCK_FILE);
      // Written in place (the same inode), so its next change is stamped after this look at it.
      writeFileSync(marker, String(counter++ % 10), { mode: 0o600 });
      const st = lstatSync(marker);
      return Math.max(st.mtimeMs, st.ctimeMs);
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  },
};

/** Whether a file with this stat may be remembered by a scan that started at `scanStart`. */
export function settledBefore(st: Pick<Stats, 'mtimeMs' | 'ctimeMs'>, scanStart: number): boolean {
  return st.mtimeMs < scanStart && st.ctimeMs < scanStart;
}
