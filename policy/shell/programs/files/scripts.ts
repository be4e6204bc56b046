/**
 * Files named inside sed and awk programs (issue 35): sed's `w FILE`, `W FILE`, the `s///w FILE`
 * flag (written) and `r FILE`, `R FILE` (read); awk's `print > "FILE"`, `print >> "FILE"`
 * (written) and `getline < "FILE"` (read). An awk output or input whose name is an expression
 * is only known at run time (a human decides). Commands and pipes these programs run are
 * runners/option-runners.ts's.
 */
import type { CommandEnv } from '../../effects/env.ts';
import { literalField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';

/** A file named in a script: `~/` there is not expanded by the program, but read as home (stricter). */
function named(path: string): Field {
  return { ...literalField(path), tilde: path === '~' || path.startsWith('~/') };
}

/** An address before a sed command: line numbers, `$`, `/regex/`, `\cregexc`, ranges, `!`. */
const SED_ADDRESS = String.raw`(?:(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\2)[^\\\n]|\\.)*\2[IM]*)(?:\s*[,~]\s*(?:\d+|\$|\+\d+|~\d+|/(?:[^/\\\n]|\\.)*/[IM]*))?\s*!?\s*)?`;
/** `w FILE` / `r FILE` commands (to the end of the line) after a command boundary. */
const SED_FILE_COMMAND = new RegExp(String.raw`(^|[;\n{}])\s*${SED_ADDRESS}([wWrR])[ \t]*([^\n]+)`, 'g');
/** The `w FILE` flag of an `s` command, any delimiter. */
const SED_S_WRITE =
  /(?:^|[;\n{}\s])s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImMe0-9]*w[ \t]*([^\n]+)/g;

/** Records the files a literal sed script writes (`w`, `W`, `s///w`) and reads (`r`, `R`). */
export function sedScriptFiles(script: string, env: CommandEnv): void {
  for (const m of script.matchAll(SED_FILE_COMMAND)) {
    const file = (m[4] ?? '').trim();
    if (file === '') continue;
    const letter = m[3] ?? '';
    if (letter === 'w' || letter === 'W') env.write(named(file), true);
    else env.read(named(file));
  }
  for (const m of script.matchAll(SED_S_WRITE)) {
    const file = (m[2] ?? '').trim();
    if (file !== '') env.write(named(file), true);
  }
}

/** `print ... > target` / `printf ... >> target`: the target up to the end of the statement. */
const AWK_PRINT_TO = /\bprintf?\b[^;{}\n]*?(?<![<>=!])(>>?)(?!=)\s*("(?:[^"\\]|\\.)*"|[^;}\n]+)/g;
/** `getline < target` / `getline var < target`. */
const AWK_GETLINE_FROM =
  /\bgetline\b(?:\s+[A-Za-z_$][A-Za-z0-9_[\]$]*)?\s*<\s*("(?:[^"\\]|\\.)*"|[^;}\n)]+)/g;

function awkTarget(text: string): string | null {
  const t = text.trim();
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(t);
  return m === null ? null : (m[1] ?? '').replace(/\\(.)/g, '$1');
}

/** Records the files a literal awk program writes (`print > "f"`) and reads (`getline < "f"`). */
export function awkScriptFiles(code: string, env: CommandEnv): void {
  for (const m of code.matchAll(AWK_PRINT_TO)) {
    const file = awkTarget(m[2] ?? '');
    if (file === null) env.caution('caution.dynamic-path', 'awk prints into a file named at run time');
    else if (file !== '') env.write(named(file), true);
  }
  for (const m of code.matchAll(AWK_GETLINE_FROM)) {
    const file = awkTarget(m[1] ?? '');
    if (file === null) env.caution('caution.dynamic-path', 'awk reads a file named at run time');
    else if (file !== '' && file !== '-') env.read(named(file));
  }
}
