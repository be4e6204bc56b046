/**
 * Wrappers that run a command as another user: sudo, doas, su and runuser (a login shell starts
 * in the user's home directory; `-s`/`-c` hand over shell code).
 */
import { dynamicField, literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValue, hasFlag, parseOptions } from '../options.ts';
import type { OptionSpec } from '../options.ts';
import { afterOptions, dropAssignments, exec, isWrap, joinCode, SH, unknown } from './wrap.ts';
import type { Wrapper } from './wrap.ts';

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

/** sudo [options] [NAME=value...] command: -s/-i with a command is shell code. */
export const sudo: Wrapper = (args, env, name) => {
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

/** doas [-s] [-u user] command. */
export const doas: Wrapper = (args, env, name) => {
  const r = afterOptions(args, { shortValue: 'uC' }, 0, name);
  if (isWrap(r)) return r;
  if (r.argv.length === 0 && hasFlag(r.parsed, 's')) return exec([SH], env);
  if (hasFlag(r.parsed, 'L')) return { kind: 'done' };
  return exec(r.argv);
};

const SU: OptionSpec = {
  shortValue: 'cgGswuC',
  longValue: ['command', 'session-command', 'group', 'supp-group', 'shell', 'whitelist-environment', 'user'],
  longFlags: ['login', 'preserve-environment', 'pty', 'fast', 'help', 'version'],
};

/** su / runuser: `-c code`, a login shell (`-`, `-l`) in the user's home, or a shell. */
export const su: Wrapper = (args, env) => {
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
