/**
 * Programs that run a command or code handed to them in an option or argument (beyond the
 * wrappers and shells): `tar --to-command`, `rsync -e`, `ssh -o ProxyCommand=`, `zip -TT`,
 * `git rebase -x`, `git submodule foreach`, `socat EXEC:`, `nc -e`, `awk 'system(...)'`,
 * `sed 's/../../e'`, editors and debuggers with shell escapes, `crontab`. Literal shell commands
 * are analyzed recursively; code in another language that can start processes is unanalyzable.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import type { UnanalyzableRuleId } from '../../rules/ids.ts';
import { flagValues, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';

/** What an option runs; `network` when its stdin comes from a socket (nc -e, socat EXEC:). */
export type Code =
  | { readonly code: string; readonly network?: boolean }
  | { readonly argv: readonly Field[]; readonly network?: boolean }
  | { readonly unknown: string; readonly ruleId?: UnanalyzableRuleId };

const INLINE = 'unanalyzable.inline-interpreter-code' as const;

/** Shell code given as a literal field; unknown when it is not literal. */
function codeOf(f: Field | null | undefined, what: string): Code[] {
  if (f === undefined) return [];
  if (f === null || f.value === null) return [{ unknown: `${what} is not literal` }];
  return [{ code: f.value }];
}

/** Values of `--name=value` / `--name value` options, for options the spec does not know. */
function longValues(args: readonly Field[], names: readonly string[]): (Field | null)[] {
  const out: (Field | null)[] = [];
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    if (v === null || v === undefined) continue;
    for (const n of names) {
      if (v === `--${n}`) out.push(args[i + 1] ?? null);
      else if (v.startsWith(`--${n}=`)) out.push(literalField(v.slice(n.length + 3)));
    }
  }
  return out;
}

/** less +CMD / more +CMD: a `!cmd` in the initial command runs a shell command. */
const pager = (args: readonly Field[]): Code[] => {
  const out: Code[] = [];
  for (const a of args) {
    if (a.value === null) {
      if (a.prefix.startsWith('+')) out.push({ unknown: 'a non-literal initial command' });
      continue;
    }
    const bang = a.value.startsWith('+') ? a.value.indexOf('!') : -1;
    if (bang >= 0) out.push({ code: a.value.slice(bang + 1) });
  }
  return out;
};

const tar = (args: readonly Field[]): Code[] => {
  const out: Code[] = [];
  for (const f of longValues(args, [
    'to-command',
    'use-compress-program',
    'rsh-command',
    'info-script',
    'new-volume-script',
  ])) {
    out.push(...codeOf(f, 'tar command option'));
  }
  for (const f of longValues(args, ['checkpoint-action'])) {
    if (f === null || f.value === null) out.push({ unknown: 'tar --checkpoint-action is not literal' });
    else if (f.value.startsWith('exec=')) out.push({ code: f.value.slice(5) });
  }
  for (let i = 0; i < args.length; i++) {
    if (args[i]?.value === '-I' || args[i]?.value === '-F')
      out.push(...codeOf(args[i + 1] ?? null, 'tar -I/-F'));
  }
  return out;
};

const rsync = (args: readonly Field[]): Code[] => {
  const p = parseOptions(args, { shortValue: 'e', longValue: ['rsh'] });
  return flagValues(p, 'e', 'rsh').flatMap((f) => codeOf(f, 'rsync -e'));
};

const SSH_EXEC_OPTIONS = /^(proxycommand|localcommand|knownhostscommand|remotecommand)\s*[= ]\s*(.*)$/is;

const ssh = (args: readonly Field[], name: string): Code[] => {
  const spec: OptionSpec = { shortValue: name === 'scp' ? 'cFiJlOoPS' : 'bcDEeFIiJLlmOopQRSWwB' };
  const p = parseOptions(args, spec);
  const out: Code[] = [];
  for (const o of flagValues(p, 'o')) {
    if (o.value === null) {
      out.push({ unknown: `${name} -o is not literal` });
      continue;
    }
    const m = SSH_EXEC_OPTIONS.exec(o.value);
    if (m) out.push({ code: m[2] ?? '' });
  }
  if (name === 'scp' || name === 'sftp') {
    for (const s of flagValues(p, 'S'))
      out.push(s.value === null ? { unknown: `${name} -S` } : { argv: [s] });
  }
  return out;
};

const zip = (args: readonly Field[]): Code[] => {
  const out: Code[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i]?.value === '-TT') out.push(...codeOf(args[i + 1] ?? null, 'zip -TT'));
  }
  for (const f of longValues(args, ['unzip-command'])) out.push(...codeOf(f, 'zip --unzip-command'));
  return out;
};

const git = (args: readonly Field[]): Code[] => {
  const i = args.findIndex((a) => a.value === null || !a.value.startsWith('-'));
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  if (sub === 'rebase') {
    const out: Code[] = [];
    for (let j = 0; j < rest.length; j++) {
      if (rest[j]?.value === '-x' || rest[j]?.value === '--exec')
        out.push(...codeOf(rest[j + 1] ?? null, 'git rebase --exec'));
    }
    return [...out, ...longValues(rest, ['exec']).flatMap((f) => codeOf(f, 'git rebase --exec'))];
  }
  if (sub === 'submodule' && rest.some((a) => a.value === 'foreach')) {
    const after = rest
      .slice(rest.findIndex((a) => a.value === 'foreach') + 1)
      .filter((a) => a.value !== '--recursive');
    if (after.some((a) => a.value === null))
      return [{ unknown: 'git submodule foreach command is not literal' }];
    return after.length > 0 ? [{ code: after.map((a) => a.value).join(' ') }] : [];
  }
  if (sub === 'bisect' && rest[0]?.value === 'run') return [{ argv: rest.slice(1) }];
  if (sub === 'difftool' || sub === 'mergetool') {
    const out: Code[] = [];
    for (let j = 0; j < rest.length; j++) {
      if (rest[j]?.value === '-x' || rest[j]?.value === '--extcmd')
        out.push(...codeOf(rest[j + 1] ?? null, `git ${sub} -x`));
    }
    return [...out, ...longValues(rest, ['extcmd']).flatMap((f) => codeOf(f, `git ${sub} --extcmd`))];
  }
  if (sub === 'grep') {
    const out: Code[] = [];
    for (const a of rest) {
      const v = a.value;
      if (v === null) continue;
      const m = /^(?:-O|--open-files-in-pager=?)(.*)$/.exec(v);
      if (m && m[1]) out.push({ code: m[1] });
    }
    return out;
  }
  return [];
};

const socat = (args: readonly Field[]): Code[] => {
  const out: Code[] = [];
  for (const a of args) {
    if (a.value === null) {
      out.push({ unknown: 'socat address is not literal' });
      continue;
    }
    const m = /^(?:exec|system):(.*)$/i.exec(a.value);
    if (m) out.push({ code: (m[1] ?? '').split(',')[0] ?? '', network: true });
  }
  return out;
};

const netcat = (args: readonly Field[]): Code[] => {
  const p = parseOptions(args, {
    shortValue: 'ecpswiqIOTVXx',
    longValue: ['exec', 'sh-exec', 'lua-exec', 'source', 'wait', 'idle-timeout'],
  });
  const out: Code[] = [];
  for (const f of flagValues(p, 'e', 'exec')) {
    out.push(f.value === null ? { unknown: 'nc -e' } : { argv: [f], network: true });
  }
  for (const f of flagValues(p, 'c', 'sh-exec')) {
    out.push(...codeOf(f, 'nc -c').map((c) => ('code' in c ? { ...c, network: true } : c)));
  }
  if (p.flags.has('lua-exec')) out.push({ unknown: 'nc --lua-exec' });
  return out;
};

/** awk programs that start processes: system(), print | "cmd", "cmd" | getline, |&. */
const AWK_EXEC = /system\s*\(|\|\s*&|\|\s*"|"\s*\|\s*getline|\|\s*[A-Za-z_]/;

const awk = (args: readonly Field[]): Code[] => {
  const p = parseOptions(args, {
    shortValue: 'fvFiEle',
    longValue: ['file', 'assign', 'field-separator', 'include', 'exec'],
  });
  if (p.flags.has('f') || p.flags.has('file') || p.flags.has('E') || p.flags.has('exec')) return [];
  const program = p.operands[0];
  if (program === undefined) return [];
  if (program.value === null) return [{ unknown: 'awk program is not literal', ruleId: INLINE }];
  return AWK_EXEC.test(program.value) ? [{ unknown: 'awk program that runs commands', ruleId: INLINE }] : [];
};

/** GNU sed `e` command or `s///e` flag (runs the pattern space), or writes to a device. */
const SED_EXEC =
  /(^|[;{}\n])\s*(\d+|\$|\/[^/]*\/)?\s*!?\s*e(\s|;|$)|s(.).*\4.*\4[gpimMI0-9w]*e|\/dev\/(?!null|stdout|stderr)/;

const sed = (args: readonly Field[]): Code[] => {
  const p = parseOptions(args, {
    shortValue: 'efl',
    shortOptional: 'i',
    longValue: ['expression', 'file', 'line-length'],
  });
  const scripts = [...flagValues(p, 'e', 'expression')];
  if (scripts.length === 0 && !p.flags.has('f') && !p.flags.has('file') && p.operands[0])
    scripts.push(p.operands[0]);
  for (const s of scripts) {
    if (s.value === null) return [{ unknown: 'sed script is not literal', ruleId: INLINE }];
    if (SED_EXEC.test(s.value)) {
      return [{ unknown: 'sed script that runs commands or writes a device', ruleId: INLINE }];
    }
  }
  return [];
};

/** Editors, debuggers and database shells whose command options can escape to a shell. */
const SHELL_ESCAPE =
  /(^|[\s:|])!|system\s*\(|\bshell\b|\.shell|\.system|\\!|shell-command|call-process|delete-directory/i;

const escapes =
  (optionNames: readonly string[], plus = false) =>
  (args: readonly Field[], name: string): Code[] => {
    const out: Code[] = [];
    for (let i = 0; i < args.length; i++) {
      const v = args[i]?.value;
      if (v === null || v === undefined) continue;
      const attached = optionNames
        .map((o) => (v.startsWith(`${o}=`) ? v.slice(o.length + 1) : null))
        .find((x) => x !== null);
      const value = optionNames.includes(v)
        ? args[i + 1]
        : attached != null
          ? literalField(attached)
          : plus && v.startsWith('+')
            ? literalField(v.slice(1))
            : undefined;
      if (value === undefined) continue;
      if (value === null || value.value === null) {
        out.push({ unknown: `${name} command option is not literal`, ruleId: INLINE });
      } else if (SHELL_ESCAPE.test(value.value)) {
        out.push({ unknown: `${name} command option with a shell escape`, ruleId: INLINE });
      }
    }
    if (name === 'sqlite3' || name === 'psql' || name === 'mysql') {
      if (args.some((a) => a.value !== null && SHELL_ESCAPE.test(a.value))) {
        out.push({ unknown: `${name} shell escape`, ruleId: INLINE });
      }
    }
    return out;
  };

const crontab = (args: readonly Field[]): Code[] => {
  const v = args.map((a) => a.value);
  if (v.includes('-l') || v.includes('-r') || v.includes('-e') || v.includes('-i')) return [];
  return [
    { unknown: 'crontab installs commands that run later', ruleId: 'unanalyzable.unfollowable-runner' },
  ];
};

const nodemon = (args: readonly Field[]): Code[] => {
  const out: Code[] = [];
  for (let i = 0; i < args.length; i++)
    if (args[i]?.value === '--exec' || args[i]?.value === '-x')
      out.push(...codeOf(args[i + 1] ?? null, 'nodemon --exec'));
  return out;
};

const concurrently = (args: readonly Field[]): Code[] =>
  args
    .filter((a) => a.value === null || !a.value.startsWith('-'))
    .flatMap((a) => codeOf(a, 'concurrently command'));

/** What one program runs from its options, given the arguments after its name. */
export type OptionRunner = (args: readonly Field[], name: string) => Code[];

/** Option runners by program name. */
export const OPTION_RUNNERS: Readonly<Record<string, OptionRunner>> = {
  tar,
  gtar: tar,
  bsdtar: tar,
  rsync,
  ssh,
  scp: ssh,
  sftp: ssh,
  zip,
  git,
  socat,
  nc: netcat,
  ncat: netcat,
  netcat,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  sed,
  gsed: sed,
  vim: escapes(['-c', '--cmd'], true),
  vi: escapes(['-c', '--cmd'], true),
  nvim: escapes(['-c', '--cmd'], true),
  view: escapes(['-c', '--cmd'], true),
  ex: escapes(['-c', '--cmd'], true),
  emacs: escapes(['--eval', '-eval', '-l', '--load']),
  gdb: escapes(['-ex', '--eval-command', '-iex', '--init-eval-command']),
  sqlite3: escapes(['-cmd']),
  psql: escapes(['-c', '--command']),
  mysql: escapes(['-e', '--execute']),
  less: pager,
  more: pager,
  crontab,
  nodemon,
  concurrently,
};

/**
 * Analyzes what `name` runs from its options: literal shell code recursively, argv as a
 * command, anything else as unanalyzable. `runArgv` analyzes one expanded command line.
 */
export function analyzeOptionRunners(
  names: readonly string[],
  args: readonly Field[],
  env: CommandEnv,
  runArgv: (argv: readonly Field[], env: CommandEnv) => void,
): void {
  const network = env.withStdin({ kind: 'opaque' });
  for (const name of names) {
    const runner = OPTION_RUNNERS[name];
    if (runner === undefined) continue;
    for (const c of runner(args, name)) {
      if ('code' in c) env.analyzeCode(c.code, c.network ? { stdin: { kind: 'opaque' } } : {});
      else if ('argv' in c) runArgv(c.argv, c.network ? network : env);
      else env.unanalyzable(c.ruleId ?? 'unanalyzable.dynamic-code', `${name}: ${c.unknown}`);
    }
  }
}
