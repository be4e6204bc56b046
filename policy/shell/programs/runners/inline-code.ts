/**
 * Inline code of interpreters other than the shells (`python -c`, `node -e`, `perl -pi -e`,
 * `deno eval`, `Rscript -e`, `nu -c`, `make -f -`, ...), as a table of their code options. Such
 * code always needs a human in `allow` mode (caution `interpreter-code`): the analysis cannot
 * follow another language. Code that can run processes or delete files is unanalyzable, and its
 * string literals are analyzed as shell commands, so a hardline command spelled inside is denied.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { scriptFile, stdinCode } from './code-sources.ts';
import { isStreamPath } from '../../effects/paths.ts';
import { probeArguments } from '../fail-closed.ts';
import type { WrapResult, Wrapper } from './wrap.ts';

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
export function inlineVerdict(code: Field | null | undefined, who: string, env?: CommandEnv): WrapResult {
  if (code === undefined) return { kind: 'done' };
  if (code === null || code.value === null) {
    return {
      kind: 'unknown',
      ruleId: 'unanalyzable.inline-interpreter-code',
      detail: `${who}: non-literal code`,
    };
  }
  env?.caution('caution.interpreter-code', `${who} runs inline code`);
  // Absolute and home paths spelled in the code may be opened by it: checked like arguments.
  if (env !== undefined) {
    for (const s of quotedStrings(code.value)) {
      if (/^(\/|~\/)[^\s]*$/.test(s)) env.probe({ ...literalField(s), tilde: s.startsWith('~/') });
    }
  }
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
  Record<string, { code: string; value: string; long: readonly string[]; module?: string; exits?: string }>
> = {
  // `python -v` is verbose (it still runs stdin); `-V` prints the version. ruby -v and lua -v run too.
  python: { code: 'c', value: 'WXQ', long: [], module: 'm', exits: 'Vh' },
  node: { code: 'ep', value: 'r', long: ['eval', 'print', 'require', 'import', 'input-type', 'loader'] },
  perl: { code: 'eE', value: 'IMmxd', long: [] },
  ruby: { code: 'e', value: 'IrCEF', long: [], exits: 'h' },
  php: { code: 'rBRE', value: 'cdzf', long: [] },
  lua: { code: 'e', value: 'l', long: [], exits: '' },
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
        if ((spec.exits ?? 'vVh').includes(c)) return { kind: 'done' };
        if (spec.value.includes(c)) {
          if (j === v.length - 1) i++;
          break;
        }
      }
    }
    return stdinProgram(env, name);
  };

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
      ((v === '-f' || v === '--file' || v === '--makefile') && isStreamPath(args[i + 1]?.value ?? '')) ||
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

/** Inline-code runners by program name. */
export const INLINE_RUNNERS: Readonly<Record<string, Wrapper>> = {
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
