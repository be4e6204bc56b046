/**
 * Reads and writes of text tools: the grep family, sed, awk, jq, sort, uniq, and the plain
 * readers (cat, head, wc, diff, ...) with the short options that take a value.
 */
import { flagValues, hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import type { Field } from '../../syntax/field.ts';
import { patternFirst } from './collector.ts';
import { awkScriptFiles, sedScriptFiles } from './scripts.ts';
import type { Collector } from './collector.ts';

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

/** grep, egrep, fgrep, rg, ag, ack: pattern files and searched files are read. */
export const grep: Collector = (args, env, name) => {
  const p = parseOptions(args, name === 'rg' || name === 'ag' ? RG : GREP);
  flagValues(p, 'f', 'file', 'exclude-from', 'ignore-file').forEach((f) => env.read(f));
  patternFirst(p, 'e', 'f', 'regexp', 'file').forEach((f) => env.read(f));
};

/** sed: script files are read; files are read, or written with -i. */
export const sed: Collector = (args, env) => {
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
  const scripts = hasFlag(p, 'e', 'expression', 'f', 'file')
    ? flagValues(p, 'e', 'expression')
    : p.operands.slice(0, 1);
  for (const s of scripts) if (s.value !== null) sedScriptFiles(s.value, env);
  let files = patternFirst(p, 'e', 'f', 'expression', 'file');
  const inPlace = hasFlag(p, 'i', 'in-place', 'I');
  if (inPlace && files[0]?.value === '' && !hasFlag(p, 'e', 'f', 'expression', 'file'))
    files = files.slice(1);
  files.forEach((f) => (inPlace ? env.write(f, false) : env.read(f)));
};

/** awk: program files are read; files are read, or written with `-i inplace`. */
export const awk: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'fvFiEle',
    longValue: ['file', 'assign', 'field-separator', 'include', 'exec'],
  });
  flagValues(p, 'f', 'file', 'E', 'exec').forEach((f) => env.read(f));
  const inPlace = flagValues(p, 'i', 'include').some((f) => f.value === 'inplace');
  const program = hasFlag(p, 'f', 'file', 'E', 'exec') ? undefined : p.operands[0];
  if (program?.value != null) awkScriptFiles(program.value, env);
  patternFirst(p, 'f', 'file', 'E', 'exec')
    .filter((f) => f.value === null || !/^[A-Za-z_][A-Za-z0-9_]*=/.test(f.value))
    .forEach((f) => (inPlace ? env.write(f, false) : env.read(f)));
};

/** jq: the filter comes first unless -f; files, --slurpfile and --rawfile are read. */
export const jq: Collector = (args, env) => {
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
/** sort: -o is written; inputs are read. */
export const sort: Collector = (args, env) => {
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

/** uniq INPUT [OUTPUT]. */
export const uniq: Collector = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'fsw',
    longValue: ['skip-fields', 'skip-chars', 'check-chars', 'group', 'all-repeated'],
  });
  const [input, output] = p.operands;
  if (input) env.read(input);
  if (output) env.write(output, true);
};
/**
 * Readers with an output option (the file they write instead of stdout): its short letters and
 * long names. Their other operands are read.
 */
export const READ_OUTPUT: Readonly<Record<string, { short: string; long: readonly string[] }>> = {
  base64: { short: 'o', long: ['output'] },
  tree: { short: 'o', long: [] },
  iconv: { short: 'o', long: ['output'] },
  xmllint: { short: '', long: ['output'] },
  less: { short: 'oO', long: ['log-file', 'LOG-FILE'] },
};

/** A reader that writes its output option's value (READ_OUTPUT) and reads its operands. */
export function readerWithOutput(name: string): Collector {
  const out = READ_OUTPUT[name] ?? { short: '', long: [] };
  const spec: OptionSpec = {
    shortValue: (READ_VALUE[name] ?? '') + out.short,
    longValue: [...out.long, 'input'],
  };
  return (args, env) => {
    const p = parseOptions(args, spec);
    flagValues(p, ...out.short, ...out.long).forEach((f) => env.write(f, true));
    flagValues(p, 'input').forEach((f) => env.read(f));
    p.operands.forEach((f) => env.read(f));
  };
}

/** Readers whose short options take a value, by program name. */
export const READ_VALUE: Readonly<Record<string, string>> = {
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

/** Programs that read every operand. */
export const READERS = [
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
  ...Object.keys(READ_OUTPUT),
];
