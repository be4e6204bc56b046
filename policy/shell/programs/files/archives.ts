/** Reads and writes of archivers: tar (create or extract, -C directories), zip and unzip. */
import { literalField } from '../../syntax/field.ts';
import { flagValues, hasFlag, parseOptions } from '../options.ts';
import type { CommandEnv } from '../../effects/env.ts';
import type { Field } from '../../syntax/field.ts';
import type { Collector } from './collector.ts';

/**
 * tar, gtar, bsdtar: the archive is written when creating, else read; operands are read (written
 * with --remove-files); -C directories are written when extracting.
 */
export const tar: Collector = (args, env) => {
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
  if (extract) flagValues(p, 'C', 'directory').forEach((f) => extractInto(f, env));
  // Operands are relative to a -C directory: checked from the cwd and from every -C (stricter).
  const envs = [env, ...flagValues(p, 'C', 'directory').map((d) => env.withChdir(d))];
  for (const e of envs) {
    if (create) p.operands.forEach((f) => (hasFlag(p, 'remove-files') ? e.write(f, false) : e.read(f)));
  }
  if (create) flagValues(p, 'C', 'directory').forEach((d) => env.read(d));
};

/** zip ARCHIVE FILES...: the archive is written, the files read. */
export const zip: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: 'bntxi', stopAtOperand: false });
  const [archive, ...files] = p.operands;
  if (archive) env.write(archive, true);
  files.forEach((f) => env.read(f));
};

/** unzip ARCHIVE [-d DIR]: the archive is read, DIR written. */
export const unzip: Collector = (args, env) => {
  const p = parseOptions(args, { shortValue: 'dxP' });
  const archive = p.operands[0];
  if (archive) env.read(archive);
  flagValues(p, 'd').forEach((f) => extractInto(f, env));
};

/** Extraction into `dir` writes it and may write anything beneath it (`unzip a.zip -d .git`). */
function extractInto(dir: Field, env: CommandEnv): void {
  env.write(dir, false);
  env.tree(dir, 'write', { fills: true });
}
