/**
 * Wrappers: commands that run another command given in their arguments (sudo, env, nice,
 * timeout, xargs, ...). Each entry says how to find the inner command, as data plus a little
 * code for the irregular ones. Shells and interpreters live in interpreters.ts.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { dynamicField, itemsOf, literalField, printedField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import type { UnanalyzableRuleId } from '../../rules/ids.ts';
import { flagValue, hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import { TERMINALS } from './terminals.ts';

/** What unwrapping one layer yields. */
export type WrapResult =
  /**
   * Continue with these argvs (usually one; xargs -I may give several), optionally in another
   * env (stdin) and working directory (env -C, sudo -D, sudo -i).
   */
  | {
      readonly kind: 'exec';
      readonly argvs: readonly (readonly Field[])[];
      readonly env?: CommandEnv;
      readonly chdir?: Field;
    }
  /**
   * Literal shell code to analyze recursively. `sameShell` when it runs in the current shell
   * (eval, source: a `cd` in it persists); `fromStdin` when it was read from stdin (the nested
   * code then has nothing left to read).
   */
  | {
      readonly kind: 'code';
      readonly code: string;
      readonly sameShell?: boolean;
      readonly fromStdin?: boolean;
    }
  /** Nothing further runs (e.g. `sudo -l`, `command -v rm`). */
  | { readonly kind: 'done' }
  /** The inner command cannot be determined. */
  | { readonly kind: 'unknown'; readonly ruleId: UnanalyzableRuleId; readonly detail: string };

/** A wrapper: given the arguments after its name, the inner command. */
export type Wrapper = (args: readonly Field[], env: CommandEnv, name: string) => WrapResult;

/** Most items of a literal xargs input (or find start points) expanded into separate commands. */
const MAX_ITEMS = 16;

const SH: Field = literalField('sh');

function exec(argv: readonly Field[], env?: CommandEnv): WrapResult {
  if (argv.length === 0) return { kind: 'done' };
  return env ? { kind: 'exec', argvs: [argv], env } : { kind: 'exec', argvs: [argv] };
}

function unknown(ruleId: UnanalyzableRuleId, detail: string): WrapResult {
  return { kind: 'unknown', ruleId, detail };
}

/**
 * Skips the wrapper's options (POSIX order: they end at the first operand), then `positionals`
 * fixed operands (timeout's duration, chroot's root), and returns the rest as the inner command.
 * A field that may split into several words in that area makes the inner command unknown.
 */
export function afterOptions(
  args: readonly Field[],
  spec: OptionSpec,
  positionals = 0,
  name = 'wrapper',
): { argv: readonly Field[]; parsed: ReturnType<typeof parseOptions> } | WrapResult {
  const parsed = parseOptions(args, { ...spec, stopAtOperand: true });
  const end = Math.min(args.length, parsed.rest + positionals + 1);
  for (let i = 0; i < end; i++) {
    if (args[i]?.splittable) {
      return unknown(
        'unanalyzable.dynamic-program',
        `${name}: a non-literal word may change the command it runs`,
      );
    }
  }
  return { argv: args.slice(parsed.rest + positionals), parsed };
}

function isWrap(x: unknown): x is WrapResult {
  return typeof x === 'object' && x !== null && 'kind' in x;
}

/**
 * A wrapper that skips options (and fixed operands) and runs the rest; `chdirFlags` name the
 * options that set the inner command's working directory.
 */
function simple(
  spec: OptionSpec,
  positionals = 0,
  doneWhen: readonly string[] = [],
  chdirFlags: readonly string[] = [],
): Wrapper {
  return (args, _env, name) => {
    const r = afterOptions(args, spec, positionals, name);
    if (isWrap(r)) return r;
    if (doneWhen.some((f) => hasFlag(r.parsed, f))) return { kind: 'done' };
    const chdir = chdirFlags.length > 0 ? flagValue(r.parsed, ...chdirFlags) : undefined;
    if (chdir !== undefined && r.argv.length > 0) {
      return { kind: 'exec', argvs: [r.argv], chdir: chdir ?? dynamicField(false) };
    }
    return exec(r.argv);
  };
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Drops leading `NAME=value` operands (sudo, env). */
function dropAssignments(argv: readonly Field[]): readonly Field[] {
  let i = 0;
  while (i < argv.length) {
    const f = argv[i] as Field;
    if (f.value !== null ? ASSIGNMENT.test(f.value) : ASSIGNMENT.test(f.prefix)) i++;
    else break;
  }
  return argv.slice(i);
}

const SUDO: OptionSpec = {
  shortValue: 'ugpCTrtUDR',
  longValue: [
    'user',
    'group',
    'host',
    'prompt',
    'close-from',
    'chdir',
    'chroot',
    'role',
    'type',
    'other-user',
    'command-timeout',
  ],
  longFlags: [
    'askpass',
    'background',
    'edit',
    'help',
    'set-home',
    'login',
    'remove-timestamp',
    'reset-timestamp',
    'list',
    'non-interactive',
    'preserve-groups',
    'preserve-env',
    'shell',
    'stdin',
    'version',
    'validate',
    'bell',
  ],
};

const sudo: Wrapper = (args, env, name) => {
  const r = afterOptions(args, SUDO, 0, name);
  if (isWrap(r)) return r;
  if (hasFlag(r.parsed, 'e', 'edit', 'l', 'list', 'V', 'version', 'h', 'help', 'K', 'k', 'v', 'validate')) {
    if (r.argv.length === 0 || hasFlag(r.parsed, 'e', 'edit', 'l', 'list')) return { kind: 'done' };
  }
  const argv = dropAssignments(r.argv);
  if (argv.length === 0 && hasFlag(r.parsed, 's', 'shell', 'i', 'login')) return exec([SH], env);
  // sudo -s / -i with a command runs it through the shell: `sudo -s 'rm -rf /'` is shell code.
  const one = argv.length === 1 && /\s/.test(argv[0]?.value ?? '');
  if (hasFlag(r.parsed, 's', 'shell') || (one && hasFlag(r.parsed, 'i', 'login')))
    return joinCode(argv, `${name} -s command`);
  const login = hasFlag(r.parsed, 'i', 'login');
  const chdir = login
    ? homeOf(flagValue(r.parsed, 'u', 'user'))
    : (flagValue(r.parsed, 'D', 'chdir') ?? undefined);
  return chdir ? { kind: 'exec', argvs: [argv], chdir } : exec(argv);
};

/** The home directory of `user` as a tilde field (`~root`); dynamic when the user is not literal. */
function homeOf(user: Field | null | undefined): Field {
  const u = user ?? literalField('root');
  if (u === null || u.value === null || !/^[A-Za-z0-9._-]+$/.test(u.value)) return dynamicField(false);
  return { ...literalField('~' + u.value), tilde: true };
}

const doas: Wrapper = (args, env, name) => {
  const r = afterOptions(args, { shortValue: 'uC' }, 0, name);
  if (isWrap(r)) return r;
  if (r.argv.length === 0 && hasFlag(r.parsed, 's')) return exec([SH], env);
  if (hasFlag(r.parsed, 'L')) return { kind: 'done' };
  return exec(r.argv);
};

const ENV: OptionSpec = {
  shortValue: 'uCSP',
  longValue: ['unset', 'chdir', 'split-string'],
  longFlags: [
    'ignore-environment',
    'null',
    'debug',
    'help',
    'version',
    'block-signal',
    'default-signal',
    'ignore-signal',
    'list-signal-handling',
  ],
};

const env: Wrapper = (args, _env, name) => {
  const r = afterOptions(args, ENV, 0, name);
  if (isWrap(r)) return r;
  const argv = dropAssignments(r.argv);
  const split = flagValue(r.parsed, 'S', 'split-string');
  const chdir = flagValue(r.parsed, 'C', 'chdir');
  if (chdir !== undefined) {
    if (split !== undefined) return unknown('unanalyzable.dynamic-program', 'env -S with -C');
    return { kind: 'exec', argvs: [argv], chdir: chdir ?? dynamicField(false) };
  }
  if (split === undefined) return exec(argv);
  if (split === null || split.value === null || /["'\\$]/.test(split.value)) {
    return unknown('unanalyzable.dynamic-program', 'env -S with a string that is not plain literal words');
  }
  const words = split.value.split(/[ \t\n]+/).filter((w) => w !== '');
  return exec([...dropAssignments(words.map(literalField)), ...argv]);
};

const command: Wrapper = (args, _env, name) => {
  const r = afterOptions(args, {}, 0, name);
  if (isWrap(r)) return r;
  if (hasFlag(r.parsed, 'v', 'V')) return { kind: 'done' };
  return exec(r.argv);
};

const XARGS: OptionSpec = {
  shortValue: 'adEILnPs',
  shortOptional: 'eil',
  longValue: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
  longFlags: [
    'null',
    'eof',
    'replace',
    'max-lines',
    'interactive',
    'no-run-if-empty',
    'verbose',
    'exit',
    'open-tty',
    'show-limits',
    'help',
    'version',
  ],
};

function replaceIn(field: Field, token: string, item: Field): Field {
  if (field.value === null || !field.value.includes(token)) return field;
  if (item.value === null) return dynamicField(false);
  return printedField(field.value.split(token).join(item.value));
}

/**
 * The items xargs reads from literal text, as its options split them: the whole text with -0,
 * a delimiter with -d, lines with -I/-L (blanks kept), else blanks. Null when the text has
 * quotes or backslashes (xargs interprets them).
 */
function xargsItems(text: string, parsed: ReturnType<typeof parseOptions>): Field[] | null {
  if (/["'\\]/.test(text)) return null;
  if (hasFlag(parsed, '0', 'null')) return [printedField(text.replace(/\n$/, ''))];
  const delimiter = flagValue(parsed, 'd', 'delimiter');
  if (delimiter !== undefined) {
    if (delimiter === null || delimiter.value === null || delimiter.value.length !== 1) return null;
    return text.replace(/\n$/, '').split(delimiter.value).map(printedField);
  }
  if (hasFlag(parsed, 'I', 'i', 'replace', 'L', 'l', 'max-lines')) {
    return text
      .split('\n')
      .map((l) => l.replace(/^[ \t]+/, ''))
      .filter((l) => l !== '')
      .map(printedField);
  }
  return itemsOf(text);
}

const xargs: Wrapper = (args, env, name) => {
  const r = afterOptions(args, XARGS, 0, name);
  if (isWrap(r)) return r;
  const inner = r.argv.length > 0 ? r.argv : [literalField('echo')];
  const fromFile = hasFlag(r.parsed, 'a', 'arg-file');
  const stdin = env.stdin;
  const text = stdin.kind === 'pipe' || stdin.kind === 'herestring' ? stdin.code : null;
  const literalItems =
    text !== null ? xargsItems(text, r.parsed) : stdin.kind === 'pipe' ? stdin.items : null;
  const items: readonly Field[] = !fromFile && literalItems !== null ? literalItems : [dynamicField(true)];
  if (items.length > MAX_ITEMS)
    return unknown('unanalyzable.limit-exceeded', 'xargs input too long to expand');
  const inherit = env.withStdin({ kind: 'inherit' });
  const replace = r.parsed.flags.get('I') ?? r.parsed.flags.get('i') ?? r.parsed.flags.get('replace');
  if (replace !== undefined) {
    const tokenField = replace[replace.length - 1] ?? null;
    const token = tokenField === null ? '{}' : tokenField.value;
    if (token === null) return unknown('unanalyzable.dynamic-program', 'xargs -I with a non-literal token');
    const argvs = items.map((item) => inner.map((f) => replaceIn(f, token, item)));
    return { kind: 'exec', argvs: argvs.length > 0 ? argvs : [inner], env: inherit };
  }
  return { kind: 'exec', argvs: [[...inner, ...items]], env: inherit };
};

const watch: Wrapper = (args, _env, name) => {
  const r = afterOptions(
    args,
    { shortValue: 'nq', shortOptional: 'd', longValue: ['interval'], longFlags: ['exec', 'differences'] },
    0,
    name,
  );
  if (isWrap(r)) return r;
  if (hasFlag(r.parsed, 'x', 'exec')) return exec(r.argv);
  return joinCode(r.argv, 'watch');
};

/** Shell code formed by joining literal words with spaces (watch, cmd /c, powershell -Command). */
export function joinCode(argv: readonly Field[], what: string): WrapResult {
  if (argv.length === 0) return { kind: 'done' };
  const words: string[] = [];
  for (const f of argv) {
    if (f.value === null) return unknown('unanalyzable.dynamic-code', `${what}: code is not literal`);
    words.push(f.value);
  }
  return { kind: 'code', code: words.join(' ') };
}

const SU: OptionSpec = {
  shortValue: 'cgGswuC',
  longValue: ['command', 'session-command', 'group', 'supp-group', 'shell', 'whitelist-environment', 'user'],
  longFlags: ['login', 'preserve-environment', 'pty', 'fast', 'help', 'version'],
};

const su: Wrapper = (args, env) => {
  const p = parseOptions(args, SU);
  if (p.splittable)
    return unknown('unanalyzable.dynamic-program', 'su: a non-literal word may change the command');
  const operands = p.operands.filter((f) => f.value !== '-');
  const login = p.operands.some((f) => f.value === '-') || hasFlag(p, 'l', 'login');
  const home = login ? homeOf(hasFlag(p, 'u', 'user') ? flagValue(p, 'u', 'user') : operands[0]) : undefined;
  const code = flagValue(p, 'c', 'command', 'session-command');
  if (code !== undefined) {
    if (code === null || code.value === null)
      return unknown('unanalyzable.dynamic-code', 'su -c code is not literal');
    if (home === undefined) return { kind: 'code', code: code.value };
    if (home.value === null)
      return unknown('unanalyzable.dynamic-argument', 'su - to a user only known at run time');
    return { kind: 'code', code: `cd ${home.value}\n${code.value}` };
  }
  const argv = hasFlag(p, 'u', 'user') && p.dashDash ? p.operands : [SH, ...operands.slice(1)];
  if (home !== undefined) return { kind: 'exec', argvs: [argv], chdir: home };
  return argv[0] === SH ? exec(argv, env) : exec(argv);
};

const flock: Wrapper = (args, _env, name) => {
  const r = afterOptions(
    args,
    {
      shortValue: 'wEc',
      longValue: ['timeout', 'conflict-exit-code', 'command'],
      longFlags: ['shared', 'exclusive'],
    },
    1,
    name,
  );
  if (isWrap(r)) return r;
  const code = flagValue(r.parsed, 'c', 'command');
  if (code !== undefined) {
    if (code === null || code.value === null)
      return unknown('unanalyzable.dynamic-code', 'flock -c code is not literal');
    return { kind: 'code', code: code.value };
  }
  const rest = r.argv;
  if (rest[0]?.value === '-c' || rest[0]?.value === '--command') {
    const c = rest[1];
    if (c === undefined) return { kind: 'done' };
    if (c.value === null) return unknown('unanalyzable.dynamic-code', 'flock -c code is not literal');
    return { kind: 'code', code: c.value };
  }
  return exec(rest);
};

const script: Wrapper = (args, env) => {
  const p = parseOptions(args, {
    shortValue: 'cEIOTBm',
    shortOptional: 't',
    longValue: ['command', 'echo', 'log-in', 'log-out', 'log-timing', 'log-io', 'logging-format'],
  });
  const code = flagValue(p, 'c', 'command');
  if (code === undefined) return exec([SH], env);
  if (code === null || code.value === null)
    return unknown('unanalyzable.dynamic-code', 'script -c code is not literal');
  return { kind: 'code', code: code.value };
};

const npx: Wrapper = (args, _env, name) => {
  const r = afterOptions(
    args,
    { shortValue: 'pc', longValue: ['package', 'call', 'node-options'], longFlags: ['yes', 'no', 'quiet'] },
    0,
    name,
  );
  if (isWrap(r)) return r;
  const code = flagValue(r.parsed, 'c', 'call');
  if (code !== undefined) {
    if (code === null || code.value === null)
      return unknown('unanalyzable.dynamic-code', 'npx -c code is not literal');
    return { kind: 'code', code: code.value };
  }
  const [pkg, ...rest] = r.argv;
  if (pkg === undefined) return { kind: 'done' };
  if (pkg.value === null) return exec(r.argv);
  const bare = pkg.value.replace(/^@[^/]+\//, '').replace(/@[^@/]*$/, '');
  return exec([literalField(bare), ...rest]);
};

const at: Wrapper = (args, env) => {
  const p = parseOptions(args, { shortValue: 'qftM', longFlags: [] });
  if (hasFlag(p, 'f', 'l', 'r', 'd', 'c', 'V')) return { kind: 'done' };
  return exec([SH], env);
};

/** ssh DEST command...: the remote command is shell code (also for localhost). */
const ssh: Wrapper = (args, env, name) => {
  const p = parseOptions(args, { shortValue: 'bcDEeFIiJLlmOopQRSWwB', stopAtOperand: true });
  for (let i = 0; i <= Math.min(p.rest, args.length - 1); i++) {
    if (args[i]?.splittable)
      return unknown('unanalyzable.dynamic-code', `${name}: a non-literal word in its options`);
  }
  for (const f of [...(p.flags.get('i') ?? []), ...(p.flags.get('F') ?? [])]) if (f) env.read(f);
  // OpenSSH reads options after the destination too: `ssh host -p 22 'rm -rf /'`.
  let at = p.rest + 1;
  while (at < args.length && (args[at]?.value ?? '').startsWith('-') && args[at]?.value !== '--') {
    const opt = args[at]?.value ?? '';
    at += opt.length === 2 && 'bcDEeFIiJLlmOopQRSWwB'.includes(opt[1] ?? '') ? 2 : 1;
  }
  if (args[at]?.value === '--') at++;
  const remote = args.slice(at);
  if (remote.length === 0) return { kind: 'done' };
  return joinCode(remote, `${name} remote command`);
};

const runners: Wrapper = (_args, _env, name) =>
  unknown('unanalyzable.unfollowable-runner', `${name} runs commands this analysis cannot follow`);

/** Wrappers by program name. */
export const WRAPPERS: Readonly<Record<string, Wrapper>> = {
  ...TERMINALS,
  sudo,
  doas,
  env,
  command,
  xargs,
  watch,
  su,
  runuser: su,
  flock,
  script,
  npx,
  bunx: npx,
  pnpx: npx,
  at,
  batch: at,
  ssh,
  parallel: runners,
  tmux: runners,
  screen: runners,
  byobu: runners,
  dtach: runners,
  nohup: simple({ longFlags: ['help', 'version'] }),
  nice: simple({ shortValue: 'n', numeric: true, longValue: ['adjustment'] }),
  timeout: simple(
    {
      shortValue: 'sk',
      longValue: ['signal', 'kill-after'],
      longFlags: ['preserve-status', 'foreground', 'verbose'],
    },
    1,
  ),
  stdbuf: simple({ shortValue: 'ioe', longValue: ['input', 'output', 'error'] }),
  builtin: simple({}),
  exec: simple({ shortValue: 'a' }),
  time: simple({
    shortValue: 'fo',
    longValue: ['format', 'output'],
    longFlags: ['append', 'verbose', 'portability', 'quiet'],
  }),
  setsid: simple({ longFlags: ['ctty', 'fork', 'wait'] }),
  coproc: (args) => {
    // `coproc NAME { ...; }`: NAME is only a name when a compound command follows.
    const second = args[1];
    const compound =
      second !== undefined &&
      !second.quoted &&
      ['{', '(', 'if', 'while', 'until', 'for', 'case', 'select'].includes(second.value ?? '');
    return exec(compound ? args.slice(1) : args);
  },
  chroot: simple({ longValue: ['userspec', 'groups'], longFlags: ['skip-chdir'] }, 1),
  ionice: simple({ shortValue: 'cnpPu', longValue: ['class', 'classdata', 'pid', 'pgid', 'uid'] }, 0, [
    'p',
    'P',
    'u',
    'pid',
    'pgid',
    'uid',
  ]),
  chrt: simple({ shortValue: 'TPD' }, 1, ['p', 'm', 'pid', 'max']),
  taskset: simple({ longFlags: ['all-tasks', 'cpu-list', 'pid'] }, 1, ['p', 'pid']),
  nsenter: simple({ shortValue: 'tSG', shortOptional: 'mutinpUCrwT', longValue: ['wd'] }, 0, [], ['w', 'wd']),
  unshare: simple(
    {
      shortValue: 'RwSG',
      longValue: ['root', 'wd', 'setuid', 'setgid', 'map-user', 'map-group', 'propagation'],
    },
    0,
    [],
    ['w', 'wd'],
  ),
  'systemd-run': simple(
    {
      shortValue: 'pEuMH',
      longValue: [
        'unit',
        'property',
        'description',
        'slice',
        'setenv',
        'uid',
        'gid',
        'nice',
        'working-directory',
        'machine',
        'host',
        'service-type',
        'on-active',
        'on-boot',
        'on-startup',
        'on-unit-active',
        'on-unit-inactive',
        'on-calendar',
      ],
    },
    0,
    [],
    ['working-directory'],
  ),
  strace: simple({ shortValue: 'abeEIoOpPsSuUX' }),
  ltrace: simple({ shortValue: 'aADeFlnopsuwx' }),
  pkexec: simple({ longValue: ['user'], longFlags: ['disable-internal-agent', 'keep-cwd'] }),
  gosu: simple({}, 1),
  'su-exec': simple({}, 1),
  caffeinate: simple({ shortValue: 'tw' }),
  unbuffer: simple({}),
  fakeroot: simple({ shortValue: 'lsib', longValue: ['lib', 'faked'] }),
  eatmydata: simple({}),
  nocache: simple({}),
  catchsegv: simple({}),
  firejail: simple({}),
  valgrind: simple({}),
  proxychains: simple({ shortValue: 'f' }),
  proxychains4: simple({ shortValue: 'f' }),
  torsocks: simple({ shortValue: 'upaP' }),
  numactl: simple({ shortValue: 'ipmNC' }),
  cpulimit: simple({ shortValue: 'lpe', longValue: ['limit', 'pid', 'exe', 'cpu'] }, 0, [
    'p',
    'e',
    'pid',
    'exe',
  ]),
  busybox: simple({ longFlags: ['list', 'list-full', 'install', 'help'] }),
  toybox: simple({}),
};
