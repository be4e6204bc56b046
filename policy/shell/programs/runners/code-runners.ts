/**
 * Commands that run code given as text: shells (`sh -c`, stdin, scripts), `eval`, `source`,
 * `trap`, `alias`, `cmd /c`, `powershell -Command`; inline code of other interpreters lives in
 * inline-code.ts. Literal shell code is analyzed recursively by the caller; code from a
 * non-literal source is unanalyzable.
 */
import type { Field } from '../../syntax/field.ts';
import { scriptFile, stdinCode, unknown } from './code-sources.ts';
import { literalField } from '../../syntax/field.ts';
import { CONSOLE_RUNNERS } from './consoles.ts';
import { INLINE_RUNNERS } from './inline-code.ts';
import { flagValue, hasFlag, parseOptions } from '../options.ts';
import { joinCode } from './wrap.ts';
import type { Wrapper } from './wrap.ts';

const SHELL_SPEC = {
  shortValue: 'oO',
  longValue: ['rcfile', 'init-file', 'command', 'init-command'],
  longFlags: [
    'norc',
    'noprofile',
    'login',
    'posix',
    'verbose',
    'restricted',
    'debugger',
    'dump-strings',
    'dump-po-strings',
    'noediting',
    'help',
    'version',
    'interactive',
    'no-config',
    'private',
  ],
  plus: true,
  stopAtOperand: true,
} as const;

/** sh, bash, zsh, dash, ksh, fish, csh, ...: `-c 'code'`, code on stdin, or a script file. */
export const shell: Wrapper = (args, env, name) => {
  const p = parseOptions(args, SHELL_SPEC);
  for (let i = 0; i <= Math.min(p.rest, args.length - 1); i++) {
    if (args[i]?.splittable)
      return unknown('unanalyzable.dynamic-code', `${name}: a non-literal word in its options`);
  }
  const longCommand = flagValue(p, 'command');
  if (longCommand !== undefined) {
    if (longCommand === null || longCommand.value === null) {
      return unknown('unanalyzable.dynamic-code', `${name} --command code is not literal`);
    }
    return { kind: 'code', code: longCommand.value };
  }
  const operands = args.slice(p.rest);
  if (hasFlag(p, 'c')) {
    const code = operands[0];
    if (code === undefined) return { kind: 'done' };
    if (code.value === null) return unknown('unanalyzable.dynamic-code', `${name} -c code is not literal`);
    return { kind: 'code', code: code.value };
  }
  const script = operands[0];
  if (script === undefined || hasFlag(p, 's') || script.value === '-') return stdinCode(env.stdin, name);
  return scriptFile(script, env, name);
};

/** `eval word...`: the words joined by spaces are code. */
export const evalBuiltin: Wrapper = (args) => {
  const words = args[0]?.value === '--' ? args.slice(1) : args;
  const r = joinCode(words, 'eval');
  if (r.kind === 'unknown') return unknown('unanalyzable.dynamic-code', 'eval of a non-literal string');
  return r.kind === 'code' ? { ...r, sameShell: true } : r;
};

/** `source file` / `. file`. */
export const source: Wrapper = (args, env, name) => {
  const operands = args[0]?.value === '--' ? args.slice(1) : args;
  const script = operands[0];
  if (script === undefined) return { kind: 'done' };
  return scriptFile(script, env, name);
};

/** `trap 'code' SIGNAL...`. */
export const trap: Wrapper = (args) => {
  let rest = args;
  if (rest[0]?.value === '-p' || rest[0]?.value === '-l' || rest[0]?.value === '-P') return { kind: 'done' };
  if (rest[0]?.value === '--') rest = rest.slice(1);
  const code = rest[0];
  if (code === undefined || code.value === '-' || code.value === '') return { kind: 'done' };
  if (code.value === null) return unknown('unanalyzable.dynamic-code', 'trap with non-literal code');
  return { kind: 'code', code: code.value };
};

/** `alias name='code'`: the alias text is analyzed as code (aliases expand in scripts with expand_aliases). */
export const alias: Wrapper = (args) => {
  const codes: string[] = [];
  for (const f of args) {
    if (f.value === '-p' || f.value === '--') continue;
    if (f.value === null) return unknown('unanalyzable.dynamic-code', 'alias with a non-literal definition');
    const eq = f.value.indexOf('=');
    if (eq > 0 && ['pgrep', 'pidof', 'lsof'].includes(f.value.slice(0, eq))) {
      return {
        kind: 'unknown',
        ruleId: 'unanalyzable.dynamic-program',
        detail: 'alias redefines a pid-listing command',
      };
    }
    if (eq > 0) codes.push(f.value.slice(eq + 1));
  }
  return codes.length === 0 ? { kind: 'done' } : { kind: 'code', code: codes.join('\n') };
};

/** `cmd /c code` and `cmd /k code` (the rest of the line is code); plain `cmd` reads stdin. */
export const cmd: Wrapper = (args, env) => {
  if (!args.some((a) => a.value === '/?'))
    env.caution('caution.other-shell', 'cmd runs code of another shell language');
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    if (v === null || v === undefined)
      return unknown('unanalyzable.dynamic-code', 'cmd with non-literal switches');
    const m = /^\/([ck])(.*)$/i.exec(v);
    if (m) {
      const attached = m[2] ?? '';
      const rest = args.slice(i + 1);
      return joinCode(attached === '' ? rest : [literalField(attached), ...rest], 'cmd /c');
    }
    if (!v.startsWith('/')) break;
  }
  return stdinCode(env.stdin, 'cmd');
};

const PWSH_VALUE = [
  'executionpolicy',
  'windowstyle',
  'workingdirectory',
  'version',
  'inputformat',
  'outputformat',
  'configurationname',
  'custompipename',
  'settingsfile',
  'psconsolefile',
  'ex',
  'ep',
  'w',
  'wd',
];

/** powershell / pwsh: `-Command ...` (the rest is code), `-EncodedCommand` (unanalyzable), `-File f`. */
export const powershell: Wrapper = (args, env, name) => {
  if (!args.some((a) => /^-(version|v|help|h|\?)$/i.test(a.value ?? '')))
    env.caution('caution.other-shell', `${name} runs PowerShell code`);
  for (let i = 0; i < args.length; i++) {
    const f = args[i] as Field;
    if (f.value === null) return unknown('unanalyzable.dynamic-code', `${name} with a non-literal argument`);
    const v = f.value;
    if (!v.startsWith('-') && !v.startsWith('/')) return joinCode(args.slice(i), `${name} -Command`);
    const opt = v.slice(1).toLowerCase().split(':')[0] ?? '';
    if (opt === '') return stdinCode(env.stdin, name);
    const encoded =
      opt === 'e' ||
      opt === 'ec' ||
      opt === 'ea' ||
      (opt.length >= 2 && ('encodedcommand'.startsWith(opt) || 'encodedarguments'.startsWith(opt)));
    if (encoded)
      return { kind: 'unknown', ruleId: 'unanalyzable.encoded-command', detail: `${name} -EncodedCommand` };
    if ('command'.startsWith(opt) || opt === 'cwa' || 'commandwithargs'.startsWith(opt)) {
      const rest = args.slice(i + 1);
      if (rest.length === 1 && rest[0]?.value === '-') return stdinCode(env.stdin, name);
      return joinCode(rest, `${name} -Command`);
    }
    if ('file'.startsWith(opt)) {
      const script = args[i + 1];
      return script === undefined ? { kind: 'done' } : scriptFile(script, env, name);
    }
    if (PWSH_VALUE.includes(opt) || PWSH_VALUE.some((o) => o.startsWith(opt) && opt.length >= 3)) i++;
  }
  return stdinCode(env.stdin, name);
};

/** Shell interpreters by name. */
export const SHELLS = [
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'ksh93',
  'mksh',
  'lksh',
  'oksh',
  'pdksh',
  'ash',
  'yash',
  'posh',
  'rbash',
  'fish',
  'csh',
  'tcsh',
] as const;

/** Code runners by program name. */
export const CODE_RUNNERS: Readonly<Record<string, Wrapper>> = {
  ...Object.fromEntries(SHELLS.map((s) => [s, shell])),
  eval: evalBuiltin,
  source,
  '.': source,
  trap,
  alias,
  cmd,
  powershell,
  pwsh: powershell,
  ...INLINE_RUNNERS,
  ...CONSOLE_RUNNERS,
};
