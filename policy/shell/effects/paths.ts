/**
 * Path facts for hardline rules: which literal paths are the file system root, a home
 * directory or a system directory (also through globs, `..`, `~`, `$HOME`, Windows drive
 * forms), and which are devices. Pure string logic; the engine canonicalizes for real.
 */

/** Protection classes of a path; each maps to a rule id family. */
export const ProtectedClass = { root: 'root', home: 'home', system: 'system' } as const;
/** A protection class. */
export type ProtectedClass = (typeof ProtectedClass)[keyof typeof ProtectedClass];

/** A literal path as a command sees it (after cwd joining). */
export interface PathRef {
  /** The path as written (joined to a tracked cwd); used for reads/writes. */
  readonly text: string;
  /** The same path with quoted glob characters backslash-escaped. */
  readonly pattern: string;
  /** True when `text` starts with an unquoted tilde (home expansion). */
  readonly tilde: boolean;
  /** True when the path has unquoted glob characters. */
  readonly glob: boolean;
  /** The Windows reading (backslashes kept) when the path was not joined to a cwd, else null. */
  readonly win: string | null;
}

const ANY = Symbol('any');
const LETTER = Symbol('letter');
type Comp = string | typeof ANY | typeof LETTER;
type Def = readonly [readonly Comp[], ProtectedClass];

const SYSTEM_DIRS = [
  'bin',
  'boot',
  'dev',
  'etc',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'usr',
  'sbin',
  'var',
  'opt',
  'proc',
  'sys',
  'run',
  'srv',
  'snap',
  'nix',
  'media',
  'mnt',
  'lost+found',
  'system',
  'library',
  'applications',
  'private',
  'cores',
  'volumes',
  'efi',
];

const POSIX_DEFS: readonly Def[] = [
  [[], 'root'],
  [[LETTER], 'root'],
  [['mnt', LETTER], 'root'],
  [['cygdrive', LETTER], 'root'],
  [['home'], 'home'],
  [['home', ANY], 'home'],
  [['users'], 'home'],
  [['users', ANY], 'home'],
  [['root'], 'home'],
  [['var', 'root'], 'home'],
  ...SYSTEM_DIRS.map((d): Def => [[d], 'system']),
  ...[
    'bin',
    'sbin',
    'lib',
    'lib64',
    'local',
    'share',
    'include',
    'libexec',
    'local/bin',
    'local/lib',
    'local/share',
  ].map((d): Def => [['usr', ...d.split('/')], 'system']),
  ...['lib', 'log', 'db', 'cache', 'spool', 'mail', 'www', 'backups'].map((d): Def => [['var', d], 'system']),
  ...['etc', 'var', 'tmp'].map((d): Def => [['private', d], 'system']),
  [['system', 'library'], 'system'],
  [['system', 'volumes'], 'system'],
  [['system', 'volumes', 'data'], 'system'],
  [['boot', 'efi'], 'system'],
];

const DRIVE_DEFS: readonly Def[] = [
  [[], 'root'],
  [['windows'], 'system'],
  [['windows', 'system32'], 'system'],
  [['windows', 'syswow64'], 'system'],
  [['program files'], 'system'],
  [['program files (x86)'], 'system'],
  [['programdata'], 'system'],
  [['recovery'], 'system'],
  [['boot'], 'system'],
  [['system volume information'], 'system'],
  [['users'], 'home'],
  [['users', ANY], 'home'],
  [['documents and settings'], 'home'],
];

/** cmd.exe variables that name protected places (lower case, with the percent signs). */
const WINDOWS_VARS: Readonly<Record<string, readonly [string, ProtectedClass]>> = {
  '%systemdrive%': ['c:', 'root'],
  '%homedrive%': ['c:', 'root'],
  '%systemroot%': ['c:/windows', 'system'],
  '%windir%': ['c:/windows', 'system'],
  '%programfiles%': ['c:/program files', 'system'],
  '%programfiles(x86)%': ['c:/program files (x86)', 'system'],
  '%programdata%': ['c:/programdata', 'system'],
  '%allusersprofile%': ['c:/programdata', 'system'],
  '%userprofile%': ['c:/users/u', 'home'],
  '%homepath%': ['c:/users/u', 'home'],
  '%public%': ['c:/users/public', 'home'],
};

/**
 * Names a "delete the contents" glob (`*`, `?*`, `.*`, `[a-z]*`) matches at least three of; a
 * narrow glob like `e?c` is not one (it is matched against the directory names instead).
 */
const CONTENT_PROBES = [
  'bin',
  'etc',
  'usr',
  'var',
  'home',
  'documents',
  'windows',
  'a',
  '.ssh',
  '.config',
  '.bashrc',
];

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? '\\' + c : c;
}

/** A case-insensitive regex for one glob path component (backslash escapes honoured). */
export function componentRegex(component: string): RegExp {
  let re = '';
  for (let i = 0; i < component.length; i++) {
    const c = component[i] ?? '';
    if (c === '\\') {
      re += escapeRegex(component[i + 1] ?? '\\');
      i++;
    } else if (c === '*') {
      re += '.*';
    } else if (c === '?') {
      re += '.';
    } else if (c === '[') {
      const close = component.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
        continue;
      }
      let body = component.slice(i + 1, close);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      re += '[' + body.replace(/\\/g, '\\\\') + ']';
      i = close;
    } else {
      re += escapeRegex(c);
    }
  }
  try {
    return new RegExp('^' + re + '$', 'i');
  } catch {
    return /^.*$/;
  }
}

function hasGlob(component: string): boolean {
  for (let i = 0; i < component.length; i++) {
    const c = component[i];
    if (c === '\\') i++;
    else if (c === '*' || c === '?' || c === '[') return true;
  }
  return false;
}

function unescape(component: string): string {
  return component.replace(/\\(.)/g, '$1');
}

function compMatches(part: string, def: Comp): boolean {
  if (def === ANY) return part.length > 0;
  const glob = hasGlob(part);
  if (def === LETTER) {
    if (!glob) return /^[a-z]$/i.test(unescape(part));
    const re = componentRegex(part);
    return 'abcdefghijklmnopqrstuvwxyz'.split('').some((l) => re.test(l));
  }
  if (!glob) return unescape(part).toLowerCase() === def;
  return componentRegex(part).test(def);
}

function isContentsGlob(part: string): boolean {
  if (!hasGlob(part)) return false;
  const re = componentRegex(part);
  return CONTENT_PROBES.filter((p) => re.test(p)).length >= 3;
}

function matchDefs(parts: readonly string[], defs: readonly Def[]): ProtectedClass | null {
  let found: ProtectedClass | null = null;
  const rank = { root: 3, home: 2, system: 1 } as const;
  for (const [comps, cls] of defs) {
    const exact = parts.length === comps.length && comps.every((c, i) => compMatches(parts[i] ?? '', c));
    const contents =
      parts.length === comps.length + 1 &&
      comps.every((c, i) => compMatches(parts[i] ?? '', c)) &&
      isContentsGlob(parts[parts.length - 1] ?? '');
    if ((exact || contents) && (found === null || rank[cls] > rank[found])) found = cls;
  }
  return found;
}

interface Anchored {
  readonly anchor: 'root' | 'home' | 'user' | 'drive' | 'device' | 'relative';
  readonly parts: readonly string[];
  /** For `home`: how many `..` went above the home directory. */
  readonly above: number;
}

function splitParts(path: string, anchored: boolean): { parts: string[]; above: number } {
  const parts: string[] = [];
  let above = 0;
  for (const p of path.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!anchored) parts.push('..');
      else above++;
      continue;
    }
    parts.push(p);
  }
  return { parts, above };
}

function anchorPosix(pattern: string, tilde: boolean): Anchored {
  if (tilde) {
    const slash = pattern.indexOf('/');
    const user = slash < 0 ? pattern.slice(1) : pattern.slice(1, slash);
    const rest = slash < 0 ? '' : pattern.slice(slash);
    const { parts, above } = splitParts(rest, true);
    if (user === '' || user === '+' || user === '-') {
      return user === '' ? { anchor: 'home', parts, above } : { anchor: 'relative', parts, above: 0 };
    }
    return { anchor: 'user', parts, above };
  }
  if (pattern.startsWith('/')) {
    const { parts } = splitParts(pattern, true);
    return { anchor: 'root', parts, above: 0 };
  }
  const { parts } = splitParts(pattern, false);
  return { anchor: 'relative', parts, above: 0 };
}

function classifyAnchored(a: Anchored): ProtectedClass | null {
  switch (a.anchor) {
    case 'home':
    case 'user':
      if (a.above >= 2 && a.parts.length === 0) return 'root';
      if (a.above >= 1) return a.parts.length <= 2 ? 'home' : null;
      if (a.parts.length === 0) return 'home';
      if (a.parts.length === 1 && isContentsGlob(a.parts[0] ?? '')) return 'home';
      return null;
    case 'root':
      return matchDefs(a.parts, POSIX_DEFS);
    case 'drive':
      return matchDefs(a.parts, DRIVE_DEFS);
    case 'device':
      return 'root';
    case 'relative':
      return null;
  }
}

/**
 * The protection class of a POSIX-style path pattern (quoted glob characters escaped with a
 * backslash), or null. Lexical: `..` and `.` are resolved, `//` collapsed, comparison is
 * case-insensitive (macOS and Windows file systems are). `tilde` says whether a leading `~` is
 * an unquoted tilde.
 */
export function classifyPosix(pattern: string, tilde: boolean): ProtectedClass | null {
  if (/^[a-zA-Z]:/.test(pattern)) return classifyWindows(pattern);
  return classifyAnchored(anchorPosix(pattern, tilde));
}

/**
 * The protection class of a Windows path as written (`C:\`, `C:/Windows`, `\`, `%SystemRoot%`,
 * `\\?\C:\`), or null. Globs (`*`, `?`) count as wildcards.
 */
export function classifyWindows(path: string): ProtectedClass | null {
  let p = path.trim().toLowerCase().replace(/\\/g, '/');
  for (const [name, [expansion, cls]] of Object.entries(WINDOWS_VARS)) {
    if (p === name || p === name + '/') return cls;
    if (p.startsWith(name)) p = expansion + p.slice(name.length);
  }
  if (p.startsWith('//?/') || p.startsWith('//./')) {
    const rest = p.slice(4);
    if (/^[a-z]:/.test(rest)) p = rest;
    else return 'root';
  }
  const drive = /^([a-z]):(.*)$/.exec(p);
  if (drive) {
    const { parts } = splitParts(drive[2] ?? '', true);
    return classifyAnchored({ anchor: 'drive', parts, above: 0 });
  }
  if (p.startsWith('/')) {
    const { parts } = splitParts(p, true);
    return matchDefs(parts, DRIVE_DEFS) ?? matchDefs(parts, POSIX_DEFS);
  }
  return null;
}

/** True when a cmd.exe path still holds a `%VAR%` reference this module does not know. */
export function hasUnknownWindowsVar(path: string): boolean {
  const m = path.toLowerCase().match(/%[^%]+%/g);
  return m !== null && m.some((v) => WINDOWS_VARS[v] === undefined);
}

/** Lexical POSIX normalization of a path text: `//` collapsed, `.` and `..` resolved. */
export function normalizePosix(text: string): string {
  const absolute = text.startsWith('/');
  const { parts } = splitParts(text, absolute);
  if (absolute) return '/' + parts.join('/');
  return parts.length === 0 ? '.' : parts.join('/');
}

const BENIGN_DEVICES = new Set([
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/tty',
]);

/** Classification of a write target under /dev, /proc, /sys or a Windows device namespace. */
export type DeviceKind = 'benign' | 'device' | null;

/**
 * Whether writing to `path` writes to a device: `/dev/*` except the harmless ones (null, zero,
 * full, random, urandom, stdin/stdout/stderr, tty, fd/N, pts/N, shm/...), `/proc/sysrq-trigger`,
 * anything under `/sys`, and Windows `\\.\PhysicalDriveN` / `\\.\C:`. A glob under /dev is a
 * device. Null when the path is not a device path at all.
 */
export function deviceKind(path: string, glob = false): DeviceKind {
  const win = path.toLowerCase().replace(/\\/g, '/');
  if (win.startsWith('//./') || win.startsWith('//?/globalroot')) return 'device';
  if (!path.startsWith('/')) return null;
  const p = normalizePosix(path).toLowerCase();
  if (p === '/proc/sysrq-trigger' || p.startsWith('/sys/')) return 'device';
  // tmpfs folders under /dev hold ordinary files: a write there is a write outside the roots.
  if (/^\/dev\/(shm|mqueue)(\/|$)/.test(p)) return null;
  if (!p.startsWith('/dev/')) return null;
  if (glob) return 'device';
  if (BENIGN_DEVICES.has(p)) return 'benign';
  if (/^\/dev\/(fd\/\d+|pts\/\d+)$/.test(p)) return 'benign';
  return 'device';
}

/** True for paths that feed a process its own stdin or a descriptor: /dev/stdin, /dev/fd/N, /proc/self/fd/N, /dev/tcp/... */
export function isStreamPath(path: string): boolean {
  const p = normalizePosix(path).toLowerCase();
  return (
    p === '/dev/stdin' ||
    p === '-' ||
    /^\/dev\/(fd|tcp|udp)\//.test(p) ||
    /^\/proc\/(self|\d+|thread-self)\/fd\//.test(p)
  );
}
