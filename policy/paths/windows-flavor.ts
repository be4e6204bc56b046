/**
 * The Windows path flavor. Windows resolves many spellings to one file (case, trailing dots and
 * spaces, `::$DATA`, both slashes, `\\?\` prefixes, administrative shares, 8.3 short names) and
 * some names to devices. This flavor folds what it can prove equivalent and refuses the rest, so
 * that a rule written for one spelling cannot be dodged with another.
 */
import { simpleUpperCase, type ParsedPath, type PathFlavor, type PathProblem } from './flavor.ts';

type Anchored =
  { readonly anchor: string; readonly rest: string } | ({ readonly anchor: null } & PathProblem);

const DEVICE_NAMES =
  /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$|clock\$)$/i;
const FORBIDDEN_CHARACTERS = /[<>"|?*]/;
const SHORT_NAME = /^[^.~]{1,6}~[0-9]{1,6}(\.[^.]{0,3})?$/;
const DEFAULT_STREAM = /::\$data$/i;
const ADMIN_SHARE = /^[a-z]\$$/i;

function problem(ruleId: PathProblem['ruleId'], message: string): { readonly anchor: null } & PathProblem {
  return { anchor: null, ruleId, message };
}

function uncAnchor(rest: string): Anchored {
  const [server = '', share = '', ...tail] = rest.split('\\');
  if (server.length === 0 || share.length === 0) {
    return problem('roots.windows-unc', 'a UNC path needs both a server and a share');
  }
  if (ADMIN_SHARE.test(share) || share.toLowerCase() === 'admin$' || share.toLowerCase() === 'ipc$') {
    return problem('roots.windows-unc', `administrative share "${share}" aliases a whole drive`);
  }
  return { anchor: `\\\\${server}\\${share}\\`, rest: tail.join('\\') };
}

function driveAnchor(text: string): Anchored | null {
  const match = /^([A-Za-z]):(.*)$/.exec(text);
  if (match === null) return null;
  const [, letter = '', rest = ''] = match;
  if (rest.length > 0 && !rest.startsWith('\\')) {
    return problem('roots.windows-ambiguous-path', 'a drive-relative path ("C:x") depends on a hidden cwd');
  }
  if (rest.length === 0) {
    return problem('roots.windows-ambiguous-path', 'a bare drive ("C:") means that drive\'s hidden cwd');
  }
  return { anchor: `${letter.toUpperCase()}:\\`, rest };
}

/** Splits off the anchor of an absolute path; null for a relative path. */
function anchorOf(path: string): Anchored | null {
  if (path.startsWith('\\\\?\\') || path.startsWith('\\??\\')) {
    const rest = path.slice(4);
    if (/^unc\\/i.test(rest)) return uncAnchor(rest.slice(4));
    const drive = driveAnchor(rest);
    if (drive !== null) return drive;
    return problem('roots.windows-namespace', 'only drive and UNC paths are accepted after "\\\\?\\"');
  }
  if (path.startsWith('\\\\.\\')) return problem('roots.windows-device', 'the "\\\\.\\" device namespace');
  if (path.startsWith('\\\\')) return uncAnchor(path.slice(2));
  const drive = driveAnchor(path);
  if (drive !== null) return drive;
  if (path.startsWith('\\')) {
    return problem(
      'roots.windows-ambiguous-path',
      'a rooted path without a drive depends on the current drive',
    );
  }
  return null;
}

/** Normalizes one segment the way Win32 does, or refuses it. */
function normalizeSegment(raw: string): string | PathProblem {
  if (raw === '.' || raw === '..') return raw;
  if (FORBIDDEN_CHARACTERS.test(raw)) {
    return {
      ruleId: 'roots.windows-invalid-character',
      message: `"${raw}" contains a character Windows forbids`,
    };
  }
  let segment = raw;
  if (DEFAULT_STREAM.test(segment)) segment = segment.slice(0, -'::$DATA'.length);
  if (segment.includes(':')) {
    return { ruleId: 'roots.windows-ads', message: `"${raw}" names an alternate data stream` };
  }
  segment = segment.replace(/[. ]+$/, '');
  if (segment.length === 0) {
    return { ruleId: 'roots.windows-dots-segment', message: `"${raw}" is only dots and spaces` };
  }
  const stem = (segment.split('.')[0] ?? '').trimEnd();
  if (DEVICE_NAMES.test(stem)) {
    return { ruleId: 'roots.windows-device', message: `"${raw}" is a reserved device name` };
  }
  if (SHORT_NAME.test(segment)) {
    return { ruleId: 'roots.windows-short-name', message: `"${raw}" looks like an 8.3 short name` };
  }
  return segment;
}

function parseWindows(input: string, expandHome: boolean): ParsedPath {
  const path = input.replace(/\//g, '\\');
  let kind: 'absolute' | 'relative' | 'home' = 'relative';
  let anchor = '';
  let rest = path;
  if (expandHome && path.startsWith('~')) {
    if (path !== '~' && !path.startsWith('~\\')) {
      return {
        kind: 'invalid',
        ruleId: 'roots.tilde-user',
        message: 'a "~name" path is not expanded; write ".\\~name" for a file of that name',
      };
    }
    kind = 'home';
    rest = path.slice(1);
  } else {
    const anchored = anchorOf(path);
    if (anchored !== null) {
      if (anchored.anchor === null)
        return { kind: 'invalid', ruleId: anchored.ruleId, message: anchored.message };
      kind = 'absolute';
      anchor = anchored.anchor;
      rest = anchored.rest;
    }
  }
  const segments: string[] = [];
  for (const raw of rest.split('\\')) {
    if (raw.length === 0) continue;
    const segment = normalizeSegment(raw);
    if (typeof segment !== 'string') return { kind: 'invalid', ...segment };
    segments.push(segment);
  }
  return kind === 'absolute' ? { kind, anchor, segments } : { kind, segments };
}

/**
 * The Windows flavor. Guarantees beyond `PathFlavor`: both slashes separate; `C:\`, `c:/`,
 * `\\?\C:\` and `\??\C:\` give the same anchor; `\\server\share` and `\\?\UNC\server\share` give
 * the same anchor; names compare case-insensitively (one UTF-16 unit at a time, as NTFS does); trailing dots and spaces and a trailing
 * `::$DATA` are stripped; other streams, device names, `\\.\`, other `\\?\` namespaces,
 * administrative shares, 8.3 short names and drive-relative or drive-less rooted paths are refused.
 */
export const windowsFlavor: PathFlavor = {
  name: 'windows',
  caseInsensitive: true,
  maxLength: 32767,
  parse(input, options) {
    return parseWindows(input, options.expandHome);
  },
  format(anchor, segments) {
    return anchor + segments.join('\\');
  },
  matchKey(anchor, segments) {
    return anchor.replace(/\\/g, '/') + segments.join('/');
  },
  fold(text) {
    return simpleUpperCase(text);
  },
};
