/**
 * Wrappers: commands that run another command given in their arguments (sudo, env, nice,
 * timeout, xargs, ...). Each entry says how to find the inner command, as data plus a little
 * code for the irregular ones. Shells and interpreters live in code-runners.ts; the shared
 * result type and helpers in wrap.ts.
 */
import { dynamicField, literalField } from '../../syntax/field.ts';
import { flagValue, hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import { parsedOptionPaths } from '../option-values.ts';
import { doas, su, sudo } from './privilege.ts';
import { TERMINALS } from './terminals.ts';
import { afterOptions, dropAssignments, exec, isWrap, joinCode, SH, unknown } from './wrap.ts';
import type { Wrapper } from './wrap.ts';
import { xargs } from './xargs.ts';

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
  return (args, env, name) => {
    const r = afterOptions(args, spec, positionals, name);
    if (isWrap(r)) return r;
    // Its own options may name files it writes or reads (`strace -o FILE`, `time -o FILE`).
    parsedOptionPaths(r.parsed.flags, env);
    if (doneWhen.some((f) => hasFlag(r.parsed, f))) return { kind: 'done' };
    const chdir = chdirFlags.length > 0 ? flagValue(r.parsed, ...chdirFlags) : undefined;
    if (chdir !== undefined && r.argv.length > 0) {
      return { kind: 'exec', argvs: [r.argv], chdir: chdir ?? dynamicField(false) };
    }
    return exec(r.argv);
  };
}

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

const chrootInner = simple({ longValue: ['userspec', 'groups'], longFlags: ['skip-chdir'] }, 1);

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
  chroot: (args, env, name) => {
    // The command runs from another root: its program and every path it names are that root's
    // files, not the ones this analysis checks. Its hardline rules are still checked.
    if (args.some((a) => a.value === '--help' || a.value === '--version')) return { kind: 'done' };
    const r = chrootInner(args, env, name);
    if (r.kind !== 'done')
      env.caution('caution.interpreter-code', `${name} runs a program from another root`);
    const dir = args.find((a) => a.value === null || !a.value.startsWith('-'));
    if (dir !== undefined) env.probe(dir);
    return r.kind === 'exec' || r.kind === 'unknown' ? r : exec([SH], env);
  },
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
