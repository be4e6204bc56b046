/**
 * Stable ids of the `roots`-source rules the path guard reports. Sensitive and never-writable
 * path rules carry their own ids (see `sensitive-defaults.ts`). Ids are part of the Decision
 * contract: the UI, audit log and tests match on them, so they never change meaning.
 */
export const PathRuleId = {
  /** The input is empty. */
  emptyPath: 'roots.empty-path',
  /** The input contains a NUL byte. */
  nulByte: 'roots.nul-byte',
  /** The input (or a symlink target on the way) contains a control or bidi-override character. */
  controlCharacter: 'roots.control-character',
  /** The input is longer than the flavor allows. */
  pathTooLong: 'roots.path-too-long',
  /** A symlink on the way points at nothing. */
  danglingSymlink: 'roots.dangling-symlink',
  /** More symlinks than the limit were followed (a loop or an absurd chain). */
  symlinkLoop: 'roots.symlink-loop',
  /** A path component could not be examined (permission denied, I/O error, unreadable link). */
  unreadable: 'roots.unreadable-path',
  /** A file (or other non-directory) is used as a directory. */
  notADirectory: 'roots.not-a-directory',
  /** A relative input but the session has no primary root. */
  noPrimaryRoot: 'roots.no-primary-root',
  /** A relative input but the session has more than one primary root. */
  ambiguousPrimaryRoot: 'roots.ambiguous-primary-root',
  /** A `~` input but no home directory is known. */
  noHome: 'roots.no-home',
  /** `~user` forms are refused: another user's home is never expanded. */
  tildeUser: 'roots.tilde-user',
  /** The canonical path lies in no authorized root. */
  outside: 'roots.outside',
  /** A write to a path whose most specific root is read-only. */
  readOnly: 'roots.read-only',
  /** A `deny` glob of a containing root matches the path or one of its parents. */
  denyGlob: 'roots.deny-glob',
  /** Windows: a device name (`CON`, `NUL`, `COM1`, …) or the `\\.\` device namespace. */
  windowsDevice: 'roots.windows-device',
  /** Windows: an alternate data stream other than the default `::$DATA`. */
  windowsStream: 'roots.windows-ads',
  /** Windows: a character Windows forbids in names (`<>"|?*`). */
  windowsInvalidCharacter: 'roots.windows-invalid-character',
  /** Windows: a drive-relative (`C:x`) or rooted-without-drive (`\x`) path. */
  windowsAmbiguous: 'roots.windows-ambiguous-path',
  /** Windows: an incomplete UNC path or an administrative share (`\\host\C$`). */
  windowsUnc: 'roots.windows-unc',
  /** Windows: a `\\?\` namespace other than a drive or UNC (`Volume{…}`, `GLOBALROOT`). */
  windowsNamespace: 'roots.windows-namespace',
  /** Windows: an 8.3 short name (`PROGRA~1`), which can alias any long name. */
  windowsShortName: 'roots.windows-short-name',
  /** Windows: a segment made only of dots and spaces other than `.` and `..`. */
  windowsDotsSegment: 'roots.windows-dots-segment',
  /** Execution time: the path no longer canonicalizes to what was decided. */
  changedSinceDecision: 'roots.changed-since-decision',
  /** Execution time: the final component is a symlink, or the opened object is not the checked one. */
  openMismatch: 'roots.open-mismatch',
  /** Execution time: the opened object is not a regular file. */
  notARegularFile: 'roots.not-a-regular-file',
  /** Execution time: the operating system refused the open or write. */
  ioFailed: 'roots.io-failed',
} as const;
export type PathRuleId = (typeof PathRuleId)[keyof typeof PathRuleId];
