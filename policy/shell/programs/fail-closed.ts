/**
 * The fail-closed rule for programs: a program is either in a table that says which of its
 * arguments are paths (files/, git-paths.ts, the wrappers and code runners), or known to
 * take no path arguments (NO_PATH_PROGRAMS below), or unknown. Every argument of an unknown
 * program that could name a file — the word itself, the value of `--opt=value`, `@file`,
 * `key=value` — is a probe: it must be static and is checked against the roots and sensitive
 * paths (policy/shell-step.ts), because the program may read or write it.
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';

/** Programs whose arguments never name files they read or write. */
export const NO_PATH_PROGRAMS: ReadonlySet<string> = new Set([
  ':',
  '[',
  '[[',
  'alias',
  'arch',
  'basename',
  'bg',
  'break',
  'cal',
  'clear',
  'continue',
  'declare',
  'dirname',
  'disown',
  'echo',
  'exit',
  'export',
  'expr',
  'factor',
  'false',
  'fg',
  'free',
  'getconf',
  'getopts',
  'groups',
  'hash',
  'help',
  'history',
  'hostname',
  'id',
  'jobs',
  'kill',
  'killall',
  'let',
  'local',
  'locale',
  'logname',
  'man',
  'mapfile',
  'nproc',
  'numfmt',
  'pgrep',
  'pidof',
  'pkill',
  'printenv',
  'printf',
  'ps',
  'pwd',
  'read',
  'readarray',
  'readonly',
  'reset',
  'return',
  'seq',
  'set',
  'shift',
  'shopt',
  'sleep',
  'stty',
  'test',
  'times',
  'tput',
  'true',
  'tty',
  'type',
  'typeset',
  'ulimit',
  'umask',
  'uname',
  'unset',
  'uptime',
  'users',
  'wait',
  'whatis',
  'whereis',
  'which',
  'who',
  'whoami',
  'yes',
]);

/** A field for the part of a literal `f` after `n` characters; a leading `~` there is home. */
function tail(f: Field, n: number): Field {
  const v = (f.value ?? '').slice(n);
  return { ...literalField(v), tilde: v === '~' || v.startsWith('~/'), glob: f.glob };
}

/** The local path of a `file:` URL (`file:///x`, `file://localhost/x`, `file:/x`), else null. */
export function fileUrlPath(value: string): string | null {
  const m = /^file:(?:\/\/(?:localhost)?)?(\/.*)$/is.exec(value);
  if (m === null) return null;
  try {
    return decodeURIComponent(m[1] ?? '/');
  } catch {
    return m[1] ?? '/';
  }
}

/** The part of one argument that could name a file, or null when it cannot (an option, a URL). */
export function pathPart(f: Field): Field | null {
  const v = f.value;
  if (v === null) return f;
  if (v === '' || v === '-' || v === '--') return null;
  // Text over several lines (a commit message, a PR body) is no file name, unless it is spelled
  // like a path (then the control character makes it `invalid_path`).
  if (v.includes('\n') && !/^[/~.]/.test(v)) return null;
  const file = fileUrlPath(v);
  if (file !== null) return { ...literalField(file), glob: f.glob };
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(v)) return null;
  if (v.startsWith('--')) {
    const eq = v.indexOf('=');
    return eq < 0 || eq === v.length - 1 ? null : pathPart(tail(f, eq + 1));
  }
  // `-i~/.ssh/id_rsa`, `-f/etc/shadow`: a short option with its value attached.
  // `/F`, `/IM`, `/s`: a Windows switch (upper case, or one letter), not a POSIX path.
  if (/^\/(?:[A-Z?]{1,4}|[a-z?])(:.*)?$/.test(v)) return null;
  if (v.startsWith('-')) return /^-[A-Za-z0-9](~|\.{0,2}\/)/.test(v) ? pathPart(tail(f, 2)) : null;
  if (v.startsWith('@') && v.length > 1) return tail(f, 1);
  if (/^[A-Za-z]:[\\/]/.test(f.win ?? '')) return f; // a Windows drive path, not `key:value`
  const kv = /^[A-Za-z0-9_.-]+[=:]@?(?=.)/.exec(v);
  if (kv !== null && !v.startsWith('/')) return pathPart(tail(f, kv[0].length));
  return f;
}

/** Records every argument of a program without a table that could name a file as a probe. */
export function probeArguments(args: readonly Field[], env: CommandEnv): void {
  for (const a of args) {
    const p = pathPart(a);
    if (p !== null) env.probe(p);
  }
}

/**
 * Programs that, met as an argument of an unknown program, likely start a command it runs
 * (`poetry run rm -rf .`, `sshpass -p x ssh host 'rm -rf /'`, `xvfb-run sh -c ...`): from there
 * on the arguments are analyzed as a command too (stricter: its hardline rules and paths count).
 */
export const COMMAND_HEADS: ReadonlySet<string> = new Set([
  'rm',
  'rmdir',
  'dd',
  'shred',
  'wipefs',
  'mkfs',
  'chmod',
  'chown',
  'chgrp',
  'find',
  'git',
  'mv',
  'cp',
  'tee',
  'truncate',
  'kill',
  'pkill',
  'killall',
  'shutdown',
  'reboot',
  'poweroff',
  'systemctl',
  'sudo',
  'doas',
  'su',
  'env',
  'xargs',
  'ssh',
  'scp',
  'rsync',
  'curl',
  'wget',
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'eval',
  'python',
  'python3',
  'perl',
  'ruby',
  'node',
]);
