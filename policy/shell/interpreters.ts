/**
 * Commands that run code given as text: shells (`sh -c`, stdin, scripts), `eval`, `source`,
 * `trap`, `alias`, `cmd /c`, `powershell -Command`, and inline code of other interpreters
 * (`python -c`, `node -e`, ...). Literal shell code is analyzed recursively by the caller; code
 * from a non-literal source is unanalyzable.
 */
import type { CommandEnv, StdinSource } from './env.ts';
import { literalField } from './field.ts';
import type { Field } from './field.ts';
import { flagValue, hasFlag, parseOptions } from './options.ts';
import { isStreamPath } from './paths.ts';
import { probeArguments } from './programs.ts';
import { joinCode } from './wrappers.ts';
import type { WrapResult, Wrapper } from './wrappers.ts';

function unknown(
  ruleId: 'unanalyzable.dynamic-code' | 'unanalyzable.shell-stdin',
  detail: string,
): WrapResult {
  return { kind: 'unknown', ruleId, detail };
}

/** What a code reader that reads its program from stdin gets: literal code, nothing, or unknown. */
export function stdinCode(stdin: StdinSource, who: string): WrapResult {
  switch (stdin.kind) {
    case 'inherit':
      return { kind: 'done' };
    case 'pipe':
    case 'herestring':
      if (stdin.code !== null) return { kind: 'code', code: stdin.code, fromStdin: true };
      return unknown('unanalyzable.shell-stdin', `${who} reads code from a non-literal ${stdin.kind}`);
    case 'opaque':
      return unknown(
        'unanalyzable.shell-stdin',
        `${who} reads code from a here-document, file, socket or descriptor`,
      );
  }
}

/** A script operand of a shell or `source`: reads it, or says why it cannot be followed. */
function scriptFile(script: Field, env: CommandEnv, who: string): WrapResult {
  if (script.value === null) {
    if (script.proc) return unknown('unanalyzable.shell-stdin', `${who} runs a process substitution`);
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.dynamic-program',
      detail: `${who} runs a non-literal script`,
    };
  }
  if (isStreamPath(script.value))
    return unknown('unanalyzable.shell-stdin', `${who} runs code from ${script.value}`);
  if (env.wasWritten(script)) {
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.generated-script',
      detail: `${who} runs ${script.value}, written earlier in the same command`,
    };
  }
  env.read(script);
  return { kind: 'done' };
}

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

/** Inline code that runs processes, deletes trees, evaluates strings or touches devices. */
const DANGEROUS_CODE =
  /\bsystem\b|getattr|\bexec\b|\bimport\s*\(|\bexec[a-z]*\s*[(\s]|popen|subprocess|spawn|child_process|\bfork\b|rmtree|rmdir|rmSync|\brm(_rf|_r)?\s*\(|\.rm\s*\(|rimraf|unlink|os\.remove|shutil|FileUtils|remove_dir|remove_entry|File\.delete|Dir\.delete|Process\.Start|Runtime\.getRuntime|do shell script|`|\bqx\b|%x|\beval\b|Function\s*\(|__import__|importlib|\/dev\/|Remove-Item|Format-Volume|\bkill\b|ctypes|\bopen\s*\(\s*["']\|/i;

/** String literals of inline code that could be shell commands (`system "rm -rf /"`). */
function quotedStrings(code: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g;
  for (const m of code.matchAll(re)) {
    const text = m[1] ?? m[2] ?? '';
    if (/^\s*[A-Za-z./~]/.test(text)) out.push(text);
  }
  return out;
}

/**
 * Inline interpreter code always needs a human in `allow` mode (caution): the analysis cannot
 * follow another language's effects. Code that can run processes or delete files is
 * unanalyzable, and its string literals are analyzed as shell commands too, so a hardline
 * command or a sensitive path spelled inside it is still denied.
 */
function inlineVerdict(code: Field | null | undefined, who: string, env?: CommandEnv): WrapResult {
  if (code === undefined) return { kind: 'done' };
  if (code === null || code.value === null) {
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.inline-interpreter-code',
      detail: `${who}: non-literal code`,
    };
  }
  env?.caution('caution.interpreter-code', `${who} runs inline code`);
  if (DANGEROUS_CODE.test(code.value)) {
    if (env !== undefined) for (const s of quotedStrings(code.value)) env.analyzeCode(s);
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.inline-interpreter-code',
      detail: `${who}: inline code that can run processes or delete files`,
    };
  }
  return { kind: 'done' };
}

function stdinProgram(env: CommandEnv, who: string): WrapResult {
  const r = stdinCode(env.stdin, who);
  if (r.kind !== 'code') return r;
  return inlineVerdict(literalField(r.code), who, env);
}

/** Short options that take the inline program: python -c, node -e/-p, perl -e/-E, ruby -e, php -r, lua -e, osascript -e. */
const INLINE: Readonly<
  Record<string, { code: string; value: string; long: readonly string[]; module?: string }>
> = {
  python: { code: 'c', value: 'WXQ', long: [], module: 'm' },
  node: { code: 'ep', value: 'r', long: ['eval', 'print', 'require', 'import', 'input-type', 'loader'] },
  perl: { code: 'eE', value: 'IMmxd', long: [] },
  ruby: { code: 'e', value: 'IrCEF', long: [] },
  php: { code: 'rBRE', value: 'cdzf', long: [] },
  lua: { code: 'e', value: 'l', long: [] },
  osascript: { code: 'e', value: 'l', long: [] },
  bun: { code: 'e', value: '', long: ['eval', 'print'] },
  deno: { code: '', value: '', long: ['eval'] },
  r: { code: 'e', value: 'f', long: ['file'] },
  tcl: { code: 'c', value: '', long: [] },
  groovy: { code: 'e', value: 'cp', long: [] },
  elixir: { code: 'e', value: 'r', long: ['eval'] },
  guile: { code: 'ce', value: 'lL', long: [] },
  racket: { code: 'e', value: 'lt', long: ['eval'] },
  lisp: { code: '', value: '', long: ['eval'] },
  scala: { code: 'e', value: 'cp', long: [] },
  ghc: { code: 'e', value: '', long: [] },
  julia: { code: 'eE', value: 'LJp', long: ['eval', 'print', 'project', 'load'] },
};

/** Interpreters whose code option takes the next word (no attached code: `node -pe`, `-e code`). */
const DETACHED = new Set(['node', 'bun', 'deno', 'r', 'julia', 'lisp', 'elixir', 'racket']);

/** python, node, perl, ruby, php, lua, osascript: inline code is scanned; code on stdin must be literal. */
export const interpreter =
  (kind: keyof typeof INLINE): Wrapper =>
  (args, env, name) => {
    const spec = INLINE[kind];
    if (spec === undefined) return { kind: 'done' };
    let inPlace = false;
    for (let i = 0; i < args.length; i++) {
      const f = args[i] as Field;
      const v = f.value;
      if (v === null) {
        if (f.prefix.startsWith('-') || f.prefix === '') {
          return {
            kind: 'unknown',
            ruleId: 'unanalyzable.inline-interpreter-code',
            detail: `${name}: non-literal option`,
          };
        }
        return { kind: 'done' };
      }
      if (v === '-') return stdinProgram(env, name);
      if (v === '--') {
        const script = args[i + 1];
        return script === undefined ? stdinProgram(env, name) : scriptFile(script, env, name);
      }
      if (v.startsWith('--')) {
        const [long, attached] = v.slice(2).split(/=(.*)/s);
        if (long === 'eval' || long === 'print') {
          return inlineVerdict(attached !== undefined ? literalField(attached) : args[i + 1], name, env);
        }
        if (long === 'version' || long === 'help') return { kind: 'done' };
        if (attached === undefined && spec.long.includes(long ?? '')) i++;
        continue;
      }
      if (!v.startsWith('-')) {
        if ((kind === 'deno' || kind === 'bun') && v === 'eval') return inlineVerdict(args[i + 1], name, env);
        const r = scriptFile(f, env, name);
        // The script's own arguments may name files it reads or writes.
        probeArguments(args.slice(i + 1), env);
        return r;
      }
      for (let j = 1; j < v.length; j++) {
        const c = v[j] ?? '';
        if (spec.code.includes(c)) {
          const rest = v.slice(j + 1);
          const detached = DETACHED.has(kind) || spec.code.includes(rest);
          const code = !detached && rest !== '' ? literalField(rest) : args[i + 1];
          if ((kind === 'perl' || kind === 'ruby') && (inPlace || /i/.test(v.slice(1, j)))) {
            // perl -pi -e CODE FILE... (ruby -pi -e): the files are edited in place.
            const files = args.slice(i + (detached || rest === '' ? 2 : 1));
            for (const file of files) if (!(file.value ?? '').startsWith('-')) env.write(file, false);
          }
          return inlineVerdict(code, name, env);
        }
        if ((kind === 'perl' || kind === 'ruby') && c === 'i') inPlace = true;
        if (spec.module !== undefined && spec.module.includes(c)) {
          // python -m MODULE ARGS...: the module's arguments may name files it reads or writes.
          probeArguments(args.slice(i + (j === v.length - 1 ? 2 : 1)), env);
          return { kind: 'done' };
        }
        if (c === 'V' || c === 'v' || c === 'h') return { kind: 'done' };
        if (spec.value.includes(c)) {
          if (j === v.length - 1) i++;
          break;
        }
      }
    }
    return stdinProgram(env, name);
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

/** nu, xonsh, elvish -c CODE: another shell's language; checked as bash too, and a human decides. */
const otherShell: Wrapper = (args, env, name) => {
  const i = args.findIndex((a) => a.value === '-c' || a.value === '--commands' || a.value === '--command');
  env.caution('caution.other-shell', `${name} runs code of another shell language`);
  if (i < 0) return { kind: 'done' };
  const code = args[i + 1];
  if (code === undefined) return { kind: 'done' };
  if (code.value === null)
    return { kind: 'unknown', ruleId: 'unanalyzable.dynamic-code', detail: `${name}: non-literal code` };
  return { kind: 'code', code: code.value };
};

/** make -f - / --eval: a makefile from stdin or the command line runs its recipes. */
const make: Wrapper = (args, env, name) => {
  const fromStdin = args.some((a, i) => {
    const v = a.value ?? '';
    return (
      ((v === '-f' || v === '--file' || v === '--makefile') && args[i + 1]?.value === '-') ||
      v === '-f-' ||
      v === '--file=-' ||
      v.startsWith('--eval') ||
      v === '-E'
    );
  });
  if (fromStdin) env.caution('caution.interpreter-code', `${name} runs recipes given on stdin or inline`);
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value ?? '';
    const next = args[i + 1];
    if ((v === '-C' || v === '--directory') && next !== undefined) env.probe(next);
    else if ((v === '-f' || v === '--file' || v === '--makefile') && next !== undefined && next.value !== '-')
      env.read(next);
    else if (/^-[Cf]./.test(v)) continue;
    if (v === '-C' || v === '--directory' || v === '-f' || v === '--file' || v === '--makefile') i++;
  }
  probeArguments(
    args.filter(
      (a, i) => !['-C', '--directory', '-f', '--file', '--makefile'].includes(args[i - 1]?.value ?? ''),
    ),
    env,
  );
  return { kind: 'done' };
};

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
  python: interpreter('python'),
  python2: interpreter('python'),
  python3: interpreter('python'),
  pypy: interpreter('python'),
  pypy3: interpreter('python'),
  node: interpreter('node'),
  nodejs: interpreter('node'),
  perl: interpreter('perl'),
  ruby: interpreter('ruby'),
  php: interpreter('php'),
  lua: interpreter('lua'),
  osascript: interpreter('osascript'),
  bun: interpreter('bun'),
  deno: interpreter('deno'),
  nu: otherShell,
  xonsh: otherShell,
  elvish: otherShell,
  make,
  gmake: make,
  rscript: interpreter('r'),
  r: interpreter('r'),
  tclsh: interpreter('tcl'),
  wish: interpreter('tcl'),
  expect: interpreter('tcl'),
  julia: interpreter('julia'),
  groovy: interpreter('groovy'),
  elixir: interpreter('elixir'),
  guile: interpreter('guile'),
  racket: interpreter('racket'),
  sbcl: interpreter('lisp'),
  scala: interpreter('scala'),
  ghc: interpreter('ghc'),
  runghc: interpreter('ghc'),
  ipython: interpreter('python'),
  ipython3: interpreter('python'),
};
