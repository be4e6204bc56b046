/**
 * The small file-system interfaces the path guard depends on. Canonicalization needs only two
 * questions (what is at this exact path, and where does this link point); execution-time opening
 * needs a few more. Everything the guard learns about the disk goes through these, so Windows
 * rules can be tested on Linux with an in-memory fake and the real thing stays in `node-fs.ts`.
 */

/**
 * What an `lstat` of one exact path reports. `missing` covers "no such entry"; `error` is any
 * other failure (permission denied, I/O error) and makes the guard fail closed.
 */
export const EntryKind = {
  file: 'file',
  directory: 'directory',
  symlink: 'symlink',
  other: 'other',
  missing: 'missing',
  error: 'error',
} as const;
export type EntryKind = (typeof EntryKind)[keyof typeof EntryKind];

/**
 * Read-only view of the file system used for canonicalization. Implementations never throw and
 * never follow a symlink in the last component of the path they are given (the guard only asks
 * about paths whose ancestors it has already resolved).
 */
export interface PathFs {
  /** The kind of the entry at `path` without following a final symlink (`lstat`). */
  kind(path: string): EntryKind;
  /** The raw target of the symlink at `path`, or null when it is not a readable symlink. */
  readlink(path: string): string | null;
  /**
   * The names in the directory at `path` (not following a final symlink), or null when it
   * cannot be listed. Optional: without it a walk that follows links cannot be checked.
   */
  list?(path: string): readonly string[] | null;
}

/** Identity of a file system object: equal identities mean the same inode on the same device. */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly kind: EntryKind;
}

/** Result of an open at execution time. `code` is the errno name (e.g. `ELOOP`) on failure. */
export type OpenResult =
  { readonly ok: true; readonly fd: number } | { readonly ok: false; readonly code: string };

/**
 * File system operations a tool executor needs to open a checked path safely. Implementations
 * never throw; every failure is returned as data.
 */
export interface ExecFs extends PathFs {
  /**
   * Opens `path` refusing a symlink as the final component (`O_NOFOLLOW` where the platform has
   * it) and without blocking on FIFOs. `write` opens for writing, creating the file when missing,
   * and never truncates (the caller truncates after verifying the descriptor).
   */
  openNoFollow(path: string, mode: 'read' | 'write'): OpenResult;
  /** Identity of the object behind an open descriptor (`fstat`), or null on failure. */
  identityOfFd(fd: number): FileIdentity | null;
  /** Identity of the object at `path` without following a final symlink (`lstat`). */
  identityOfPath(path: string): FileIdentity | null;
  /**
   * The path the kernel reports for an open descriptor (Linux `/proc/self/fd/N`), or null where
   * the platform cannot tell.
   */
  pathOfFd(fd: number): string | null;
  /** Creates the directory `path` and its missing parents; false on failure. */
  mkdirp(path: string): boolean;
  /** Truncates the file behind `fd` to zero length and writes `data` fully; false on failure. */
  replaceContents(fd: number, data: Uint8Array): boolean;
  /** Closes `fd`, ignoring errors. */
  close(fd: number): void;
}
