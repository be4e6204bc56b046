/**
 * Recursive walks as a table: which options make a program walk its directory operands
 * (`grep -r`, `cp -r`, `chmod -R`, `rm -r`), which programs always do (`rg`, `tar c`), and
 * whether the walk reads or changes what it finds. A walked directory that holds a sensitive
 * path is that path (policy/shell-step.ts); a changed one that holds the runtime's state dir is
 * hardline.
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';
import { hasFlag, parseOptions, RM_OPTIONS, RSYNC_OPTIONS } from './options.ts';
import type { OptionSpec } from './options.ts';

/** One row: how to parse, what makes it recursive, which operands it walks. */
export interface TreeRow {
  readonly spec: OptionSpec;
  /** Options that make the walk recursive; empty: always recursive. */
  readonly recursive: readonly string[];
  /** Which operands are walked. */
  readonly walks: 'all' | 'after-first' | 'all-but-last' | 'after-mode';
  readonly access: 'read' | 'write';
  /** Walk `.` when no operand is walked. */
  readonly defaultHere?: boolean;
  /**
   * Options that make the walk follow the symlinks it meets (`grep -R`, `rg -L`, `cp -rL`);
   * `always` when it follows them unless one of `unless` is given (`zip -r` without `-y`).
   */
  readonly follow?: readonly string[] | { readonly always: true; readonly unless: readonly string[] };
  /** The walk only lists names (TreeWalk.names). */
  readonly names?: boolean;
}

const GREP: TreeRow = {
  spec: {
    shortValue: 'efmABCdD',
    longValue: ['regexp', 'file', 'max-count', 'context', 'include', 'exclude', 'exclude-dir', 'label'],
  },
  recursive: ['r', 'R', 'recursive', 'dereference-recursive'],
  walks: 'after-first',
  access: 'read',
  defaultHere: true,
  follow: ['R', 'dereference-recursive'],
};
const RG: TreeRow = {
  spec: { shortValue: 'efmABCgtTjMrE', longValue: ['regexp', 'file', 'glob', 'type', 'max-depth'] },
  recursive: [],
  walks: 'after-first',
  access: 'read',
  defaultHere: true,
  follow: ['L', 'follow'],
};
const COPY: TreeRow = {
  spec: { shortValue: 'tS', longValue: ['target-directory', 'suffix'] },
  recursive: ['r', 'R', 'a', 'recursive', 'archive'],
  walks: 'all-but-last',
  access: 'read',
  follow: ['L', 'dereference'],
};
const CHANGE: TreeRow = {
  spec: { longValue: ['reference', 'from'] },
  recursive: ['R', 'recursive'],
  walks: 'after-mode',
  access: 'write',
  follow: ['L'],
};
/** ls -R and tree list every name beneath their operands. */
const LIST: TreeRow = {
  spec: {
    shortValue: 'IwT',
    longValue: ['ignore', 'hide', 'width', 'tabsize', 'format', 'sort', 'time', 'time-style', 'block-size'],
  },
  recursive: ['R', 'recursive'],
  walks: 'all',
  access: 'read',
  defaultHere: true,
  follow: ['L', 'dereference'],
  names: true,
};

/** Tree walks by program name (tar, gtar and bsdtar are read by `tar` below). */
export const TREE_ROWS: Readonly<Record<string, TreeRow>> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: RG,
  ag: { ...RG, follow: ['f', 'follow'] },
  ack: { ...RG, follow: ['follow'] },
  ls: LIST,
  tree: {
    ...LIST,
    spec: { shortValue: 'LPIo', longValue: ['filelimit', 'timefmt', 'charset', 'sort'] },
    recursive: [],
    follow: ['l'],
  },
  cp: COPY,
  // scp -r follows the links it meets in the tree.
  scp: { ...COPY, spec: { shortValue: 'cFiJlOoPS' }, recursive: ['r'], follow: { always: true, unless: [] } },
  rsync: {
    ...COPY,
    spec: RSYNC_OPTIONS,
    follow: ['L', 'copy-links', 'k', 'copy-dirlinks', 'copy-unsafe-links'],
  },
  // zip stores what a link points to unless -y (--symlinks).
  zip: {
    spec: { shortValue: 'bntxi' },
    recursive: ['r', 'R', 'recurse-paths'],
    walks: 'after-first',
    access: 'read',
    follow: { always: true, unless: ['y', 'symlinks'] },
  },
  chmod: CHANGE,
  chown: CHANGE,
  chgrp: CHANGE,
  rm: { spec: RM_OPTIONS, recursive: ['r', 'R', 'recursive'], walks: 'all', access: 'write' },
  // mv moves a directory with everything beneath it.
  mv: { ...COPY, recursive: [], access: 'write' },
};

function walked(row: TreeRow, operands: readonly Field[], hasReference: boolean): readonly Field[] {
  switch (row.walks) {
    case 'all':
      return operands;
    case 'after-first':
      return operands.slice(1);
    case 'all-but-last':
      return operands.length < 2 ? [] : operands.slice(0, -1);
    case 'after-mode':
      return hasReference ? operands : operands.slice(1);
  }
}

/** tar: creating an archive walks every operand. */
function tar(args: readonly Field[], env: CommandEnv): void {
  let list = args;
  const first = args[0]?.value;
  if (first != null && /^[a-zA-Z]+$/.test(first)) list = [literalField('-' + first), ...args.slice(1)];
  const p = parseOptions(list, {
    shortValue: 'fCTXbgIKLNV',
    longValue: ['file', 'directory', 'files-from', 'exclude-from', 'exclude', 'transform'],
    longFlags: ['create', 'append', 'update', 'remove-files'],
  });
  if (!hasFlag(p, 'c', 'create', 'r', 'append', 'u', 'update')) return;
  const access = hasFlag(p, 'remove-files') ? 'write' : 'read';
  const follow = hasFlag(p, 'h', 'dereference');
  const dirs = [...(p.flags.get('C') ?? []), ...(p.flags.get('directory') ?? [])];
  const envs = [env, ...dirs.filter((d): d is Field => d !== null).map((d) => env.withChdir(d))];
  for (const e of envs) for (const f of p.operands) e.tree(f, access, { follow });
}

/** Records the directories `name` walks recursively with these arguments. */
export function recursiveTargets(name: string, args: readonly Field[], env: CommandEnv): void {
  if (name === 'tar' || name === 'gtar' || name === 'bsdtar') {
    tar(args, env);
    return;
  }
  const row = Object.hasOwn(TREE_ROWS, name) ? TREE_ROWS[name] : undefined;
  if (row === undefined) return;
  const p = parseOptions(args, row.spec);
  if (row.recursive.length > 0 && !hasFlag(p, ...row.recursive)) {
    if (!(name === 'grep' && p.flags.get('d')?.some((v) => v?.value === 'recurse'))) return;
  }
  const targets = walked(row, p.operands, hasFlag(p, 'reference'));
  const dest = p.operands.at(-1);
  if (name === 'rsync' && dest !== undefined && [...p.flags.keys()].some((k) => k.startsWith('delete')))
    env.tree(dest, 'write');
  const f = row.follow;
  const follow = f === undefined ? false : 'always' in f ? !hasFlag(p, ...f.unless) : hasFlag(p, ...f);
  const how = { follow, names: row.names === true };
  if (targets.length === 0 && row.defaultHere === true) {
    env.tree(literalField('.'), row.access, how);
    return;
  }
  for (const t of targets) env.tree(t, row.access, how);
}
