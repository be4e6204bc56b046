/**
 * The messages between the search orchestrator (main thread) and `worker.mjs` (pool threads).
 * One task covers many files and directories: a task per file costs more than it saves.
 */

/** One batch of search work. Paths in `dirs` and `files` are relative to `base`. */
export interface ScanTask {
  /** Directory the relative paths start from (`/proc/self/fd/N` when pinned), or the file itself. */
  readonly base: string;
  /** `base` is a single file to search (then `dirs` and `files` are ignored). */
  readonly singleFile: boolean;
  readonly dirs: readonly string[];
  readonly files: readonly string[];
  readonly pattern: string;
  readonly flags: string;
  /** Files this task may scan at most; the rest is handed back as pending. */
  readonly maxFiles: number;
  /** Matches this task may return at most. */
  readonly maxMatches: number;
  /** Files larger than this are skipped. */
  readonly maxFileBytes: number;
  /** Matched lines are cut to this many characters. */
  readonly maxLineChars: number;
  /** Directory names never entered (e.g. `.git`). */
  readonly skipDirs: readonly string[];
  /** `Date.now()` after which the task stops between files and hands back what is left. */
  readonly deadline: number;
}

/** One matching line. */
export interface ScanMatch {
  /** Relative to the task's base (empty for a single file). */
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** What was skipped and why. */
export interface SkipCounts {
  readonly large: number;
  readonly binary: number;
  readonly unreadable: number;
  readonly symlinks: number;
  readonly other: number;
}

/** The outcome of one task. */
export interface ScanResult {
  readonly matches: readonly ScanMatch[];
  readonly filesScanned: number;
  readonly bytesScanned: number;
  readonly skipped: SkipCounts;
  /** Work not done, to be handed to further tasks. */
  readonly pendingDirs: readonly string[];
  readonly pendingFiles: readonly string[];
  readonly stoppedBy: 'deadline' | 'matches' | null;
}

/**
 * One file for `read_file` in the pool (task kind `readFiles`). The main thread has already
 * re-checked and opened `path` through `openAtExecution` and holds that verified descriptor open
 * until the worker is done (so the inode below cannot be recycled meanwhile).
 */
export interface ReadRequest {
  /** The checked canonical path. */
  readonly path: string;
  /** Device and inode (decimal strings) of the descriptor verified on the main thread. */
  readonly dev: string;
  readonly ino: string;
  /** First line wanted (1-based). */
  readonly startLine: number;
  /** Last line wanted, inclusive (`Infinity` for the end of the file). */
  readonly lastWanted: number;
  /** Bytes of content returned at most. */
  readonly maxBytes: number;
  /** Bytes read at most to reach the lines. */
  readonly maxScan: number;
}

/** A batch of `read_file` requests: many files per task, as for scans. */
export interface ReadTask {
  readonly files: readonly ReadRequest[];
}

/** The lines read; see `read_file`'s result. */
export interface LineRangeResult {
  readonly content: string;
  readonly startLine: number;
  readonly endLine: number | null;
  readonly totalLines: number | null;
  readonly truncated: boolean;
}

/**
 * The outcome of one `ReadRequest`. A refusal carries the path policy's reason (`invalid_path`)
 * and rule (`roots.open-mismatch`, `roots.not-a-regular-file`, `roots.io-failed`) exactly as
 * `openAtExecution` reports them; `binary_file` and `io_failed` are the tool's own codes.
 */
export type ReadOutcome =
  | { readonly ok: true; readonly result: LineRangeResult }
  | {
      readonly ok: false;
      readonly kind: 'refused';
      readonly reason: 'invalid_path';
      readonly rule: string;
      readonly message: string;
      readonly osCode?: string;
    }
  | { readonly ok: false; readonly kind: 'binary_file' | 'io_failed'; readonly message: string };
