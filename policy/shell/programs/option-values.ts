/**
 * Paths inside option values (issue 35): `--output=/tmp/x`, `--post-file=$HOME/.netrc`,
 * `--files-from=/etc/shadow`, `-o/tmp/x`. A program's table names the options it knows; this
 * catches the ones it does not. For a program with a table, an option value spelled in the same
 * word as its option is a path when it looks like one (absolute, home, `./`, `../`, or with a
 * `/`) or when the option's name says it takes one (`--log-file`, `--files-from`, `--config`);
 * it is written when the option names an output (`--output`, `--out-file`, `--log-file`,
 * `-o/tmp/x`), else probed (static, inside the roots, not sensitive). A value only known at run
 * time in such an option is a probe too (a human decides).
 */
import type { CommandEnv } from '../effects/env.ts';
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';

/** Long option names that name an output file or folder. */
const OUTPUT_NAME =
  /^(o|out|output|outfile|out-?file|output-?file|output-?document|output-?dir(ectory)?|out-?dir|log|log-?file|logfile|append-?output|dump(-header)?|save(-cookies)?|cookie-?jar|trace(-ascii)?|xml-?file|stderr|report|result-?file|target-?dir(ectory)?|dest(ination)?)$/i;

/** Long option names that take a path. */
const PATH_NAME =
  /(file|files?-from|path|dir|directory|output|out|log|from|config|conf|cert|key|cookies?|jar|dump|save|load|input|script|socket|cache|temp|tmp|dest|target|prefix|trace|home|root|rc|profile|netrc|keyring|credentials|identity)/i;

/** Long option names whose value is a pattern or a format, never a file (`--exclude=/node_modules`). */
const PATTERN_NAME =
  /^(exclude|include|filter|glob|iglob|ignore|exclude-dir|include-dir|pattern|regexp?|format|pretty|sort|type|colou?r|date|header|user-agent|data|url|suffix|chmod|chown)$/i;

/** True when a literal value reads as a path (absolute, home, relative with a slash). */
function looksLikePath(v: string): boolean {
  return /^(\/|~\/|\.{1,2}\/)/.test(v) || (v.includes('/') && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(v));
}

/** A field for `value`, a leading `~/` read as home (`$HOME` after `=` is kept as `~`). */
function valueField(value: string, glob: boolean): Field {
  return { ...literalField(value), tilde: value === '~' || value.startsWith('~/'), glob };
}

/**
 * Records the paths in the option values of `args` (a program with a table): see the module
 * comment. Operands and options without an attached value are left to the program's table.
 */
export function optionValuePaths(args: readonly Field[], env: CommandEnv): void {
  for (const a of args) {
    const v = a.value;
    if (v === null) {
      // `--post-file=$F`: a run-time value in an option that takes a path.
      const m = /^--([A-Za-z0-9][A-Za-z0-9-]*)=/.exec(a.prefix);
      if (m !== null && PATH_NAME.test(m[1] ?? '')) env.probe(a);
      continue;
    }
    if (v === '--') return;
    const long = /^--([A-Za-z0-9][A-Za-z0-9-]*)=(.+)$/s.exec(v);
    if (long !== null) {
      const name = long[1] ?? '';
      const value = long[2] ?? '';
      if (PATTERN_NAME.test(name) || (!looksLikePath(value) && !PATH_NAME.test(name))) continue;
      const f = valueField(value, a.glob);
      if (OUTPUT_NAME.test(name)) env.write(f, true);
      else env.probe(f);
      continue;
    }
    // `-o/tmp/x`, `-f~/.netrc`: a short option with a path attached.
    const short = /^-([A-Za-z])((?:~|\.{0,2})\/.*)$/s.exec(v);
    if (short !== null) {
      const f = valueField(short[2] ?? '', a.glob);
      if (short[1] === 'o') env.write(f, true);
      else env.probe(f);
    }
  }
}

/**
 * Records the paths in the option values a wrapper parsed (`strace -o FILE`, `time -o FILE`,
 * `valgrind --log-file=FILE`, `proxychains -f FILE`): an output option's value is written, any
 * other value that looks like a path (or belongs to an option that takes one) is probed.
 */
export function parsedOptionPaths(
  flags: ReadonlyMap<string, readonly (Field | null)[]>,
  env: CommandEnv,
): void {
  for (const [name, values] of flags) {
    for (const f of values) {
      if (f === null) continue;
      const output = name === 'o' || (name.length > 1 && OUTPUT_NAME.test(name));
      if (f.value === null) {
        if (output || (name.length > 1 && PATH_NAME.test(name))) env.probe(f);
        continue;
      }
      if (!looksLikePath(f.value) && !output && !(name.length > 1 && PATH_NAME.test(name))) continue;
      const field = { ...f, tilde: f.tilde || f.value === '~' || f.value.startsWith('~/') };
      if (output) env.write(field, true);
      else env.probe(field);
    }
  }
}
