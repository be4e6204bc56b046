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
