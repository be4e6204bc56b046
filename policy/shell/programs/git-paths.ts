/**
 * The paths of a git command line, as a table: the directories git works in (`-C`,
 * `--git-dir`, `--work-tree`), which subcommands rewrite the work tree (`reset --hard`,
 * `checkout`, `clean`, ...) or create a directory (`clone`, `init`, `worktree add`), and the
 * operands of every other subcommand as probes (pathspecs may name any file).
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';
import { probeArguments } from './fail-closed.ts';

/** Subcommands that may rewrite files of the work tree. */
const TREE_WRITERS = new Set([
  'am',
  'apply',
  'checkout',
  'cherry-pick',
  'merge',
  'mv',
  'pull',
  'rebase',
  'reset',
  'restore',
  'revert',
  'rm',
  'stash',
  'switch',
]);

/** Short options of subcommands whose value is never a path (`-m message`, `-b branch`). */
const VALUE_NOT_PATH = new Set(['-m', '-b', '-B', '-c', '-C', '-o', '-S', '-X', '-s']);

function globalDirs(args: readonly Field[]): { dirs: Field[]; rest: readonly Field[] } {
  const dirs: Field[] = [];
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    const v = f.value;
    if (v === null || !v.startsWith('-')) return { dirs, rest: args.slice(i) };
    const m = /^--(git-dir|work-tree)=(.*)$/s.exec(v);
    if (m !== null) {
      const d = m[2] ?? '';
      dirs.push({ ...literalField(d), tilde: d === '~' || d.startsWith('~/') });
    } else if (v === '-C' || v === '--git-dir' || v === '--work-tree') {
      const next = args[i + 1];
      if (next !== undefined) dirs.push(next);
      i++;
    } else if (['-c', '--namespace', '--super-prefix', '--config-env', '--exec-path'].includes(v)) i++;
  }
  return { dirs, rest: [] };
}

/** `git remote` and `git submodule` verbs that write the repository's config. */
const REMOTE_WRITES = new Set(['add', 'set-url', 'rename', 'remove', 'rm', 'set-branches']);
const SUBMODULE_WRITES = new Set(['add', 'init', 'set-url', 'set-branch', 'sync', 'deinit']);
/** `git config` forms that only read. */
const CONFIG_READS = new Set([
  '--get',
  '--get-all',
  '--get-regexp',
  '--get-urlmatch',
  '--get-color',
  '--get-colorbool',
  '--list',
  '-l',
  'get',
  'list',
]);
const CONFIG_WRITES = new Set([
  '--unset',
  '--unset-all',
  '--add',
  '--replace-all',
  '--rename-section',
  '--remove-section',
  '--edit',
  '-e',
  'set',
  'unset',
  'rename-section',
  'remove-section',
  'edit',
]);

/**
 * The config file a git verb writes (`git config KEY VALUE`, `git remote set-url`, `git
 * submodule init`): `.git/config`, or the scope's file (`--global`, `--system`, `--worktree`,
 * `--file F`). Null when it writes none.
 */
function configFileWritten(sub: string, args: readonly Field[]): Field | null {
  const first = args.find((a) => a.value === null || !a.value.startsWith('-'))?.value;
  if (sub === 'remote') return first != null && REMOTE_WRITES.has(first) ? literalField('.git/config') : null;
  if (sub === 'submodule')
    return first != null && SUBMODULE_WRITES.has(first) ? literalField('.git/config') : null;
  if (sub !== 'config') return null;
  let file: Field = literalField('.git/config');
  let writes = false;
  let reads = false;
  const operands: Field[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as Field;
    const v = a.value;
    if (v === null) {
      operands.push(a);
      continue;
    }
    if (v === '--global') file = literalField('~/.gitconfig');
    else if (v === '--system') file = literalField('/etc/gitconfig');
    else if (v === '--worktree') file = literalField('.git/config.worktree');
    else if (v === '-f' || v === '--file') file = args[++i] ?? file;
    else if (v.startsWith('--file=')) file = literalField(v.slice('--file='.length));
    else if (['--type', '--default', '--comment', '--blob', '--value', '--url'].includes(v)) i++;
    else if (CONFIG_READS.has(v)) reads = true;
    else if (CONFIG_WRITES.has(v)) writes = true;
    else if (!v.startsWith('-')) operands.push(a);
  }
  // `git config KEY` reads; `git config KEY VALUE` (or a non-literal word) writes.
  if (!reads && operands.length >= 2) writes = true;
  if (!reads && operands.some((o) => o.value === null)) writes = true;
  return writes ? file : null;
}

/** Records the reads, writes, trees and probes of one git command line. */
export function gitPaths(args: readonly Field[], env: CommandEnv): void {
  const { dirs, rest } = globalDirs(args);
  // git works in these directories: they must be static and inside the read-write roots.
  for (const d of dirs) env.probe(d);
  const last = dirs.at(-1);
  const wenv = last !== undefined && last.value !== null ? env.withChdir(last) : env;
  const here = literalField('.');
  const sub = rest[0]?.value ?? null;
  const subArgs = rest.slice(1);
  if (sub === null) return;
  const operands: Field[] = [];
  for (let i = 0; i < subArgs.length; i++) {
    const f = subArgs[i] as Field;
    // `git archive -o FILE`, `git diff --output=FILE`, `git format-patch -o DIR`: written.
    const out = /^(-o|--output|--output-directory)(=(.*))?$/s.exec(f.value ?? '');
    if (out !== null && (out[1] !== '-o' || sub === 'archive' || sub === 'format-patch')) {
      const target = out[2] !== undefined ? literalField(out[3] ?? '') : subArgs[++i];
      const file = out[1] === '--output' || sub === 'archive';
      if (target !== undefined)
        wenv.write(
          target.value === null ? target : { ...target, tilde: /^~(\/|$)/.test(target.value) },
          file,
        );
      continue;
    }
    if (f.value !== null && VALUE_NOT_PATH.has(f.value)) {
      i++;
      continue;
    }
    if (f.value !== null && /^--(message|author|date|branch|format|pretty)=/.test(f.value)) continue;
    operands.push(f);
  }
  const letters = subArgs
    .map((a) => a.value ?? '')
    .filter((v) => /^-[A-Za-z]+$/.test(v))
    .join('');
  const config = configFileWritten(sub, subArgs);
  if (config !== null) wenv.write(config, true);
  const dryRun = letters.includes('n') || subArgs.some((a) => a.value === '--dry-run');
  const force = letters.includes('f') || subArgs.some((a) => a.value === '--force');
  if (sub === 'clean' && force && !dryRun) {
    // It deletes untracked files beneath its pathspecs (the work tree without any); without
    // -x the ignored ones stay, so it may spare what it walks through.
    const specs = operands.filter(
      (f, i) =>
        (f.value === null || !f.value.startsWith('-')) &&
        !/^(-e|--exclude)$/.test(operands[i - 1]?.value ?? ''),
    );
    const filtered = !letters.includes('x');
    for (const s of specs.length > 0 ? specs : [here]) {
      wenv.tree(s, 'write', { filtered });
      wenv.write(s, false);
    }
  } else if (TREE_WRITERS.has(sub)) {
    wenv.write(here, false);
  }
  if (sub === 'clone' || sub === 'init' || sub === 'worktree')
    probeArguments(
      operands.filter((f) => f.value !== null && f.value.startsWith('--')),
      wenv,
    );
  if (sub === 'clone') {
    const plain = operands.filter((f) => f.value === null || !f.value.startsWith('-'));
    const dest = plain[1];
    if (dest !== undefined) wenv.write(dest, false);
    const source = plain[0];
    if (source?.value != null && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\/|^[^/]*:/.test(source.value))
      wenv.read(source);
    return;
  }
  if (sub === 'init' || (sub === 'worktree' && operands[0]?.value === 'add')) {
    const plain = operands.filter((f) => f.value === null || !f.value.startsWith('-'));
    const dest = sub === 'init' ? plain[0] : plain[1];
    wenv.write(dest ?? here, false);
    return;
  }
  probeArguments(operands, wenv);
}
