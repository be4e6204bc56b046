/**
 * Interpreters and consoles beyond the shells and the inline-code table (issue 35): gnuplot,
 * jshell, lldb, gdb, psql, mysql, sqlite3, octave, emacs, dc, ... Each takes code in an option
 * (`gnuplot -e`, `lldb -o`, `gdb -ex`, `psql -c`), or on its stdin (`jshell <<< '...'`,
 * `printf 'x' | dc`). Code in another language needs a human in `allow` mode (caution
 * `interpreter-code`); its string literals are still checked as commands and paths. Their other
 * arguments are probed like an unknown program's. Also the fallback for programs in no table:
 * an option that usually holds code (`--eval`, `--execute`, `-Command`, or `-e`/`-c` with a
 * value that reads as code) makes an unknown program an interpreter too.
 */
import type { CommandEnv } from '../../effects/env.ts';
import type { Field } from '../../syntax/field.ts';
import { probeArguments } from '../fail-closed.ts';
import { inlineVerdict } from './inline-code.ts';
import type { WrapResult, Wrapper } from './wrap.ts';

/** A console: the options whose value is code (exact spellings, or `--name=` forms of long ones). */
interface ConsoleSpec {
  readonly code: readonly string[];
  /** Operands after this many are code (sqlite3 DB SQL, redis-cli eval). */
  readonly codeOperandsFrom?: number;
}

const CONSOLES: Readonly<Record<string, ConsoleSpec>> = {
  gnuplot: { code: ['-e'] },
  jshell: { code: [] },
  lldb: { code: ['-o', '-O', '-k', '-K', '--one-line', '--one-line-before-file', '--one-line-on-crash'] },
  gdb: { code: ['-ex', '-iex', '--eval-command', '--init-eval-command', '-eval-command'] },
  cgdb: { code: ['-ex'] },
  psql: { code: ['-c', '--command'] },
  mysql: { code: ['-e', '--execute'] },
  mariadb: { code: ['-e', '--execute'] },
  sqlite3: { code: ['-cmd'], codeOperandsFrom: 1 },
  duckdb: { code: ['-c', '-cmd', '-s'], codeOperandsFrom: 1 },
  'redis-cli': { code: ['--eval', 'eval', 'EVAL', 'evalsha', 'EVALSHA'] },
  mongo: { code: ['--eval'] },
  mongosh: { code: ['--eval'] },
  cqlsh: { code: ['-e', '--execute'] },
  sqlcmd: { code: ['-q', '-Q'] },
  sqlplus: { code: [] },
  octave: { code: ['--eval'] },
  matlab: { code: ['-batch', '-r'] },
  scilab: { code: ['-e'] },
  maxima: { code: ['--batch-string'] },
  clojure: { code: ['-e', '--eval'] },
  clj: { code: ['-e', '--eval'] },
  bb: { code: ['-e', '--eval'] },
  kotlin: { code: ['-e'] },
  kotlinc: { code: ['-e', '-expression'] },
  swift: { code: ['-e'] },
  irb: { code: [] },
  ghci: { code: ['-e'] },
  erl: { code: ['-eval', '-s', '-run'] },
  iex: { code: ['-e', '--eval'] },
  ocaml: { code: [] },
  utop: { code: [] },
  dc: { code: ['-e', '--expression'] },
  jrunscript: { code: ['-e'] },
  jjs: { code: [] },
  rhino: { code: ['-e'] },
  qjs: { code: ['-e', '--eval'] },
  gjs: { code: ['-c', '--command'] },
  sage: { code: ['-c'] },
  wolframscript: { code: ['-code', '-c'] },
  r2: { code: ['-c', '-i'] },
  radare2: { code: ['-c', '-i'] },
  emacs: { code: ['--eval', '-eval', '--execute', '-l', '--load'] },
  ed: { code: [] },
  red: { code: [] },
  cscript: { code: [] },
  wscript: { code: [] },
  mshta: { code: [] },
};

/** True when stdin is code given in the command (a here-string, a here-document, a literal pipe). */
function codeOnStdin(env: CommandEnv): boolean {
  const s = env.stdin;
  return s.kind === 'herestring' || s.kind === 'opaque' || (s.kind === 'pipe' && s.code !== null);
}

const HELP = /^(-h|-\?|--help|-help|--version|-version|-v|-V)$/;

/** A console's wrapper: code in its options, operands or stdin needs a human. */
function console(spec: ConsoleSpec): Wrapper {
  return (args, env, name): WrapResult => {
    if (args.length > 0 && args.every((a) => a.value !== null && HELP.test(a.value))) return { kind: 'done' };
    const rest: Field[] = [];
    let verdict: WrapResult = { kind: 'done' };
    let code = false;
    let operands = 0;
    for (let i = 0; i < args.length; i++) {
      const f = args[i] as Field;
      const v = f.value;
      const eq = v?.indexOf('=') ?? -1;
      const long = v !== null && v.startsWith('--') && eq > 0 ? v.slice(0, eq) : null;
      if (v !== null && (spec.code.includes(v) || (long !== null && spec.code.includes(long)))) {
        code = true;
        const value = long !== null ? { ...f, value: v.slice(eq + 1) } : args[++i];
        const r = inlineVerdict(value ?? null, name, env);
        if (r.kind !== 'done') verdict = r;
        continue;
      }
      if (v === null || !v.startsWith('-')) {
        if (spec.codeOperandsFrom !== undefined && operands >= spec.codeOperandsFrom) {
          code = true;
          const r = inlineVerdict(f, name, env);
          if (r.kind !== 'done') verdict = r;
        } else rest.push(f);
        operands++;
        continue;
      }
      rest.push(f);
    }
    if (!code && codeOnStdin(env))
      env.caution('caution.interpreter-code', `${name} reads code from its stdin`);
    else if (code) env.caution('caution.interpreter-code', `${name} runs code given on its command line`);
    probeArguments(rest, env);
    return verdict;
  };
}

/** Consoles by program name. */
export const CONSOLE_RUNNERS: Readonly<Record<string, Wrapper>> = Object.fromEntries(
  Object.entries(CONSOLES).map(([name, spec]) => [name, console(spec)]),
);

/** Options that hold code in most programs that have them. */
const CODE_OPTION =
  /^(--?eval|--?execute|--?exec-code|-ex|-Command|-command|--command|-batch|--batch-string|-code)$/;
/** `-e` / `-c` values that read as code rather than a name or a number. */
const CODE_LIKE = /[\s();{}"'`|&<>]/;

/**
 * True when an unknown program is given code in an option: `--eval CODE`, `--execute=CODE`,
 * `-Command CODE`, or `-e`/`-c` with a value that reads as code (`-e 'plot sin(x)'`).
 */
export function takesCode(args: readonly Field[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]?.value;
    if (v === null || v === undefined || !v.startsWith('-')) continue;
    const eq = v.indexOf('=');
    const opt = eq > 0 ? v.slice(0, eq) : v;
    if (CODE_OPTION.test(opt)) return true;
    if (opt === '-e' || opt === '-c') {
      const value = eq > 0 ? v.slice(eq + 1) : args[i + 1]?.value;
      if (value === null || (value !== undefined && CODE_LIKE.test(value))) return true;
    }
  }
  return false;
}
