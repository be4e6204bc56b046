/**
 * Reads and writes of common file commands, as data: which arguments a command reads and which
 * it writes (creates, truncates, deletes, moves, changes). Only what the command line states;
 * the engine canonicalizes the paths. Options that take a value are declared so their values
 * are not mistaken for paths.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValues, parseOptions, RM_OPTIONS, RSYNC_OPTIONS } from '../options.ts';
import { fileUrlPath } from '../fail-closed.ts';
import { link, ln } from '../links.ts';
import { optionValuePaths } from '../option-values.ts';
import { SYSTEM_STATE } from '../system-state.ts';
import { recursiveTargets } from '../trees.ts';
import { tar, unzip, zip } from './archives.ts';
import { chmodLike, copyLike, CP, dd, removeItem, windowsTargets } from './change.ts';
import { readAll, writeAll } from './collector.ts';
import { DEVICE_READERS } from './devices.ts';
import type { Collector } from './collector.ts';
import {
  awk,
  grep,
  jq,
  READ_OUTPUT,
  READ_VALUE,
  readerWithOutput,
  READERS,
  sed,
  sort,
  uniq,
} from './text.ts';
import { curl, openssl, remoteCopy, wget } from './transfer.ts';

/** Collectors by program name. */
export const COLLECTORS: Readonly<Record<string, Collector>> = {
  ...Object.fromEntries(READERS.map((n) => [n, readAll({ shortValue: READ_VALUE[n] ?? '' })])),
  ...Object.fromEntries(Object.keys(READ_OUTPUT).map((n) => [n, readerWithOutput(n)])),
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
  ...SYSTEM_STATE,
  ...DEVICE_READERS,
};

/** Deleting commands that, in PowerShell, take their paths from the pipeline. */
export const PIPE_DELETERS: ReadonlySet<string> = new Set([
  'rm',
  'del',
  'erase',
  'rd',
  'rmdir',
  'ri',
  'remove-item',
  'unlink',
]);

/** True when program `name` has a read/write table here. */
export function hasFileTable(name: string): boolean {
  return Object.hasOwn(COLLECTORS, name);
}

/** Records the reads and writes `args` of program `name` state. */
export function collectFileArgs(name: string, args: readonly Field[], env: CommandEnv): void {
  const collector = hasFileTable(name) ? COLLECTORS[name] : undefined;
  if (collector) {
    collector(args, env, name);
    // Options the table does not know may still carry a path (`base64 --output=/tmp/x`).
    optionValuePaths(args, env);
  }
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
