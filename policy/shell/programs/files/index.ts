/**
 * Reads and writes of common file commands, as data: which arguments a command reads and which
 * it writes (creates, truncates, deletes, moves, changes). Only what the command line states;
 * the engine canonicalizes the paths. Options that take a value are declared so their values
 * are not mistaken for paths.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValue, flagValues, hasFlag, parseOptions, RM_OPTIONS, RSYNC_OPTIONS } from '../options.ts';
import type { OptionSpec, ParsedOptions } from '../options.ts';
import { isRemoteOperand } from '../../rules/delete.ts';
import { fileUrlPath } from '../fail-closed.ts';
import { link, ln } from '../links.ts';
import { recursiveTargets } from '../trees.ts';

/** Emits the reads and writes of one command's arguments. */
type Collector = (args: readonly Field[], env: CommandEnv, name: string) => void;

function readAll(spec: OptionSpec = {}): Collector {
  return (args, env) => parseOptions(args, spec).operands.forEach((f) => env.read(f));
}

function writeAll(spec: OptionSpec, content: boolean): Collector {
  return (args, env) => parseOptions(args, spec).operands.forEach((f) => env.write(f, content));
}

/** A field for the part of `f` after a literal prefix (`of=`, `@`, `name=@`). */
function after(f: Field, prefixLength: number): Field {
  if (f.value === null) return f;
  return { ...literalField(f.value.slice(prefixLength)), tilde: f.value.slice(prefixLength).startsWith('~') };
}

/** Pattern-first commands (grep, rg, sed, awk, jq): the program comes first unless given by an option. */
function patternFirst(p: ParsedOptions, ...programOptions: string[]): readonly Field[] {
  return hasFlag(p, ...programOptions) ? p.operands : p.operands.slice(1);
}

const GREP: OptionSpec = {
  shortValue: 'efmABCdD',
  longValue: [
    'regexp',
    'file',
    'max-count',
    'after-context',
    'before-context',
    'context',
    'directories',
    'devices',
    'include',
    'exclude',
    'exclude-from',
    'exclude-dir',
    'label',
    'glob',
    'iglob',
    'type',
    'type-not',
    'threads',
    'max-columns',
    'replace',
    'encoding',
    'max-depth',
    'ignore-file',
  ],
};

const RG: OptionSpec = { ...GREP, shortValue: 'efmABCgtTjMrE' };

const grep: Collector = (args, env, name) => {
  const p = parseOptions(args, name === 'rg' || name === 'ag' ? RG : GREP);
  flagValues(p, 'f', 'file', 'exclude-from', 'ignore-file').forEach((f) => env.read(f));
  patternFirst(p, 'e', 'f', 'regexp', 'file').forEach((f) => env.read(f));
};

const sed: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'efl',
    shortOptional: 'i',
    longValue: ['expression', 'file', 'line-length'],
    longFlags: [
      'in-place',
      'quiet',
      'silent',
      'regexp-extended',
      'separate',
      'null-data',
      'posix',
      'debug',
      'sandbox',
    ],
  });
  flagValues(p, 'f', 'file').forEach((f) => env.read(f));
  let files = patternFirst(p, 'e', 'f', 'expression', 'file');
  const inPlace = hasFlag(p, 'i', 'in-place', 'I');
  if (inPlace && files[0]?.value === '' && !hasFlag(p, 'e', 'f', 'expression', 'file'))
    files = files.slice(1);
  files.forEach((f) => (inPlace ? env.write(f, false) : env.read(f)));
};

const awk: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'fvFiEle',
    longValue: ['file', 'assign', 'field-separator', 'include', 'exec'],
  });
  flagValues(p, 'f', 'file', 'E', 'exec').forEach((f) => env.read(f));
  const inPlace = flagValues(p, 'i', 'include').some((f) => f.value === 'inplace');
  patternFirst(p, 'f', 'file', 'E', 'exec')
    .filter((f) => f.value === null || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(f.value))
    .forEach((f) => (inPlace ? env.write(f, false) : env.read(f)));
};

const jq: Collector = (args, env) => {
  const operands: Field[] = [];
  let fromFile = false;
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    if (v === '--args' || v === '--jsonargs') break;
    if (v === '--arg' || v === '--argjson') i += 2;
    else if (v === '--slurpfile' || v === '--rawfile') {
      const file = args[i + 2];
      if (file) env.read(file);
      i += 2;
    } else if (v === '-f' || v === '--from-file') {
      const file = args[i + 1];
      if (file) env.read(file);
      fromFile = true;
      i++;
    } else if (v === '--indent' || v === '-L') i++;
    else if (v === undefined || v === null || !v.startsWith('-') || v === '-')
      operands.push(args[i] as Field);
  }
  (fromFile ? operands : operands.slice(1)).forEach((f) => env.read(f));
};

/** cp / install / mv / ln: a destination (`-t DIR` or the last operand) and sources. */
function copyLike(spec: OptionSpec, sourcesAre: 'read' | 'write' | 'none', content: boolean): Collector {
  return (args, env, name) => {
    const p = parseOptions(args, spec);
    const target = flagValue(p, 't', 'target-directory');
    if (name === 'install' && hasFlag(p, 'd', 'directory')) {
      p.operands.forEach((f) => env.write(f, false));
      return;
    }
    let sources: readonly Field[];
    if (target !== undefined) {
      if (target !== null) env.write(target, content);
      sources = p.operands;
    } else {
      if (p.operands.length < 2) return;
      env.write(p.operands[p.operands.length - 1] as Field, content);
      sources = p.operands.slice(0, -1);
    }
    if (sourcesAre === 'read') sources.forEach((f) => env.read(f));
    if (sourcesAre === 'write') sources.forEach((f) => env.write(f, false));
  };
}

const CP: OptionSpec = {
  shortValue: 'tS',
  longValue: ['target-directory', 'suffix'],
  longFlags: ['recursive', 'force', 'no-target-directory', 'archive', 'parents', 'verbose'],
};

const chmodLike: Collector = (args, env, name) => {
  const p = parseOptions(args, { longValue: ['reference', 'from'] });
  const modeAsOption =
    name === 'chmod' && [...p.flags.keys()].some((k) => k.length === 1 && 'rwxXstugoa'.includes(k));
  const targets = hasFlag(p, 'reference') || modeAsOption ? p.operands : p.operands.slice(1);
  flagValues(p, 'reference').forEach((f) => env.read(f));
  targets.forEach((f) => env.write(f, false));
};

const dd: Collector = (args, env) => {
  for (const f of args) {
    if (f.value?.startsWith('of=')) env.write(after(f, 3), true);
    else if (f.value?.startsWith('if=')) env.read(after(f, 3));
  }
};

const CURL_VALUE = 'oTdFKcDbEHXAeuxmwrCYyzUQ';
const CURL_LONG = [
  'output',
  'upload-file',
  'data',
  'data-binary',
  'data-ascii',
  'data-raw',
  'data-urlencode',
  'json',
  'form',
  'form-string',
  'config',
  'cookie-jar',
  'dump-header',
  'cookie',
  'cert',
  'key',
  'cacert',
  'header',
  'request',
  'user-agent',
  'referer',
  'user',
  'proxy',
  'max-time',
  'write-out',
  'range',
  'continue-at',
  'url',
  'resolve',
  'trace',
  'trace-ascii',
  'output-dir',
  'connect-timeout',
  'retry',
  'proxy-user',
  'netrc-file',
];

const curl: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: CURL_VALUE, longValue: CURL_LONG });
  flagValues(p, 'o', 'output', 'c', 'cookie-jar', 'D', 'dump-header', 'trace', 'trace-ascii').forEach((f) =>
    env.write(f, true),
  );
  flagValues(p, 'output-dir').forEach((f) => env.write(f, false));
  flagValues(p, 'T', 'upload-file', 'K', 'config', 'E', 'cert', 'key', 'cacert', 'netrc-file').forEach((f) =>
    env.read(f),
  );
  for (const f of flagValues(p, 'd', 'data', 'data-binary', 'data-ascii', 'data-urlencode', 'json')) {
    const v = f.value;
    if (v === null) continue;
    const at = v.startsWith('@') ? 0 : v.indexOf('@');
    if (at >= 0 && (at === 0 || /^[A-Za-z0-9_.-]*$/.test(v.slice(0, at)))) env.read(after(f, at + 1));
  }
  for (const f of flagValues(p, 'F', 'form')) {
    const m = f.value === null ? null : /^[^=]*=[@<]([^;]*)/.exec(f.value);
    if (m) env.read({ ...literalField(m[1] ?? ''), tilde: (m[1] ?? '').startsWith('~') });
  }
  for (const f of flagValues(p, 'b', 'cookie')) if (f.value !== null && !f.value.includes('=')) env.read(f);
};

const wget: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'OoaPiUeDTtwQlIXAR',
    longValue: [
      'output-document',
      'output-file',
      'append-output',
      'directory-prefix',
      'input-file',
      'post-file',
      'body-file',
      'load-cookies',
      'save-cookies',
      'certificate',
      'private-key',
      'ca-certificate',
      'user-agent',
      'header',
      'post-data',
      'method',
      'body-data',
      'tries',
      'timeout',
      'wait',
      'level',
    ],
  });
  flagValues(p, 'O', 'output-document', 'o', 'output-file', 'a', 'append-output', 'save-cookies').forEach(
    (f) => env.write(f, true),
  );
  flagValues(p, 'P', 'directory-prefix').forEach((f) => env.write(f, false));
  flagValues(
    p,
    'i',
    'input-file',
    'post-file',
    'body-file',
    'load-cookies',
    'certificate',
    'private-key',
    'ca-certificate',
  ).forEach((f) => env.read(f));
};

const tar: Collector = (args, env) => {
  let list = args;
  const first = args[0]?.value;
  if (first !== null && first !== undefined && /^[a-zA-Z]+$/.test(first) && !first.startsWith('-')) {
    list = [literalField('-' + first), ...args.slice(1)];
  }
  const p = parseOptions(list, {
    shortValue: 'fCTXbgIKLNV',
    longValue: [
      'file',
      'directory',
      'files-from',
      'exclude-from',
      'use-compress-program',
      'exclude',
      'transform',
    ],
    longFlags: [
      'create',
      'extract',
      'get',
      'list',
      'append',
      'update',
      'concatenate',
      'delete',
      'remove-files',
    ],
  });
  const create = hasFlag(p, 'c', 'create', 'r', 'append', 'u', 'update', 'A', 'concatenate', 'delete');
  const extract = hasFlag(p, 'x', 'extract', 'get');
  flagValues(p, 'f', 'file').forEach((f) => (create ? env.write(f, true) : env.read(f)));
  flagValues(p, 'T', 'files-from', 'X', 'exclude-from').forEach((f) => env.read(f));
  if (extract) flagValues(p, 'C', 'directory').forEach((f) => env.write(f, false));
  // Operands are relative to a -C directory: checked from the cwd and from every -C (stricter).
  const envs = [env, ...flagValues(p, 'C', 'directory').map((d) => env.withChdir(d))];
  for (const e of envs) {
    if (create) p.operands.forEach((f) => (hasFlag(p, 'remove-files') ? e.write(f, false) : e.read(f)));
  }
  if (create) flagValues(p, 'C', 'directory').forEach((d) => env.read(d));
};

const zip: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: 'bntxi', stopAtOperand: false });
  const [archive, ...files] = p.operands;
  if (archive) env.write(archive, true);
  files.forEach((f) => env.read(f));
};

const unzip: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: 'dxP' });
  const archive = p.operands[0];
  if (archive) env.read(archive);
  flagValues(p, 'd').forEach((f) => env.write(f, false));
};

function remoteCopy(spec: OptionSpec): Collector {
  return (args, env) => {
    const p = parseOptions(args, spec);
    flagValues(p, 'i', 'F').forEach((f) => env.read(f));
    if (p.operands.length < 2) return;
    const local = (f: Field): boolean => f.value === null || !isRemoteOperand(f.value);
    const dest = p.operands[p.operands.length - 1] as Field;
    if (local(dest)) env.write(dest, true);
    p.operands
      .slice(0, -1)
      .filter(local)
      .forEach((f) => env.read(f));
  };
}

const sort: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'kotTSy',
    longValue: [
      'key',
      'output',
      'field-separator',
      'temporary-directory',
      'buffer-size',
      'files0-from',
      'random-source',
      'compress-program',
      'parallel',
      'batch-size',
    ],
  });
  flagValues(p, 'o', 'output').forEach((f) => env.write(f, true));
  flagValues(p, 'files0-from', 'random-source').forEach((f) => env.read(f));
  p.operands.forEach((f) => env.read(f));
};

const uniq: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'fsw',
    longValue: ['skip-fields', 'skip-chars', 'check-chars', 'group', 'all-repeated'],
  });
  const [input, output] = p.operands;
  if (input) env.read(input);
  if (output) env.write(output, true);
};

const openssl: Collector = (args, env) => {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    const next = args[i + 1];
    if (next === undefined || v === null || v === undefined) continue;
    if (['-out', '-keyout'].includes(v)) env.write(next, true);
    else if (['-in', '-key', '-inkey', '-signkey', '-CAkey', '-CA', '-cert', '-certfile'].includes(v))
      env.read(next);
  }
};

const windowsTargets: Collector = (args, env) => {
  for (const f of args) {
    const v = f.value;
    if (v === null || (!/^\/[a-zA-Z?]/.test(v) && !(v.startsWith('-') && v.length > 1))) {
      env.write(f.win !== null ? { ...literalField(f.win), tilde: f.tilde } : f, false);
    }
  }
};

const removeItem: Collector = (args, env) => {
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v !== null && v.startsWith('-') && v.length > 1) {
      const opt = v.slice(1).toLowerCase();
      if (
        ['path', 'literalpath', 'lp', 'pspath'].some((p) => p.startsWith(opt) && opt.length >= 2) ||
        opt === 'p'
      ) {
        const next = args[i + 1];
        if (next)
          env.write(next.win !== null ? { ...literalField(next.win), tilde: next.tilde } : next, false);
        i++;
      } else if (
        ['filter', 'include', 'exclude', 'credential', 'stream'].some(
          (p) => p.startsWith(opt) && opt.length >= 2,
        )
      ) {
        i++;
      }
      continue;
    }
    env.write(f.win !== null ? { ...literalField(f.win), tilde: f.tilde } : f, false);
  }
};

const READ_VALUE: Readonly<Record<string, string>> = {
  head: 'nc',
  tail: 'ncs',
  nl: 'bdfhilnsvw',
  od: 'AjNStw',
  xxd: 'cglos',
  hexdump: 'efns',
  strings: 'nte',
  base64: 'w',
  cut: 'dfbc',
  du: 'dBt',
  ls: 'IwT',
  tree: 'LPIo',
  diff: 'UCxXIFSWL',
  cmp: 'inb',
  file: 'fFem',
};

const READERS = [
  'cat',
  'dir',
  'vdir',
  'tac',
  'less',
  'more',
  'bat',
  'batcat',
  'view',
  'md5sum',
  'sha1sum',
  'sha224sum',
  'sha256sum',
  'sha384sum',
  'sha512sum',
  'b2sum',
  'cksum',
  'sum',
  'stat',
  'wc',
  'comm',
  'readlink',
  'realpath',
  'shasum',
  'md5',
  'iconv',
  'column',
  'fold',
  'fmt',
  'paste',
  'expand',
  'unexpand',
  'rev',
  'tr',
  'xmllint',
  'yq',
  ...Object.keys(READ_VALUE),
];

/** Collectors by program name. */
const COLLECTORS: Readonly<Record<string, Collector>> = {
  ...Object.fromEntries(READERS.map((n) => [n, readAll({ shortValue: READ_VALUE[n] ?? '' })])),
  grep,
  egrep: grep,
  fgrep: grep,
  rg: grep,
  ag: grep,
  ack: grep,
  sed,
  gsed: sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  jq,
  cp: copyLike(CP, 'read', true),
  install: copyLike(
    { shortValue: 'tSgmo', longValue: ['target-directory', 'suffix', 'group', 'mode', 'owner'] },
    'read',
    true,
  ),
  mv: copyLike(CP, 'write', true),
  ln,
  link,
  rm: writeAll(RM_OPTIONS, false),
  rimraf: writeAll({}, false),
  srm: writeAll({}, false),
  rmdir: (args, env, name) =>
    args.some((f) => f.value !== null && /^\/[a-zA-Z?]$/.test(f.value))
      ? windowsTargets(args, env, name)
      : writeAll({ longFlags: ['parents', 'ignore-fail-on-non-empty', 'verbose'] }, false)(args, env, name),
  unlink: writeAll({}, false),
  shred: writeAll({ shortValue: 'ns', longValue: ['iterations', 'size', 'random-source'] }, true),
  touch: (args, env) => {
    const p = parseOptions(args, { shortValue: 'rdt', longValue: ['reference', 'date', 'time'] });
    flagValues(p, 'r', 'reference').forEach((f) => env.read(f));
    p.operands.forEach((f) => env.write(f, false));
  },
  mkdir: writeAll({ shortValue: 'm', longValue: ['mode', 'context'] }, false),
  chmod: chmodLike,
  chown: chmodLike,
  chgrp: chmodLike,
  truncate: (args, env) => {
    const p = parseOptions(args, { shortValue: 'sr', longValue: ['size', 'reference'] });
    flagValues(p, 'r', 'reference').forEach((f) => env.read(f));
    p.operands.forEach((f) => env.write(f, true));
  },
  tee: writeAll({ longFlags: ['append', 'ignore-interrupts', 'output-error'] }, true),
  sponge: writeAll({}, true),
  ddrescue: (args, env) => {
    const p = parseOptions(args, { shortValue: 'bcimMOsSxKTV' });
    const [input, output] = p.operands;
    if (input) env.read(input);
    if (output) env.write(output, true);
  },
  dcfldd: dd,
  dd,
  curl,
  wget,
  tar,
  gtar: tar,
  bsdtar: tar,
  zip,
  unzip,
  scp: remoteCopy({ shortValue: 'cFiJlOoPS' }),
  rsync: remoteCopy(RSYNC_OPTIONS),
  sort,
  uniq,
  openssl,
  del: windowsTargets,
  erase: windowsTargets,
  rd: windowsTargets,
  'remove-item': removeItem,
  ri: removeItem,
};

/** Deleting commands that, in PowerShell, take their paths from the pipeline. */
const PIPE_DELETERS = new Set(['rm', 'del', 'erase', 'rd', 'rmdir', 'ri', 'remove-item', 'unlink']);

/** True when program `name` has a read/write table here. */
export function hasFileTable(name: string): boolean {
  return Object.hasOwn(COLLECTORS, name);
}

/** Records the reads and writes `args` of program `name` state. */
export function collectFileArgs(name: string, args: readonly Field[], env: CommandEnv): void {
  const collector = hasFileTable(name) ? COLLECTORS[name] : undefined;
  if (collector) collector(args, env, name);
  // `gci C:\ -r | rm -Force`, `dir | del`: PowerShell deletes the paths piped into it.
  if (
    PIPE_DELETERS.has(name) &&
    env.stdin.kind === 'pipe' &&
    !args.some((a) => a.value === null || !/^[-/]/.test(a.value))
  )
    env.caution('caution.pipeline-targets', `${name} deletes the paths piped into it`);
  recursiveTargets(name, args, env);
  // Any program given a `file:` URL (curl, wget, browsers) reads that local path.
  for (const a of args) {
    const local = a.value === null ? null : fileUrlPath(a.value.replace(/^[A-Za-z0-9_-]*=/, ''));
    if (local !== null) env.read(literalField(local));
  }
}
