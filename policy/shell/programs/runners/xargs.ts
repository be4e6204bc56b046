/**
 * xargs: the inner command, run once per item when the items are known (literal text piped or
 * given as a here-string, or the words of an earlier pipeline stage), else with a run-time item.
 */
import { dynamicField, itemsOf, literalField, printedField } from '../../syntax/field.ts';
import type { Field } from '../../syntax/field.ts';
import { flagValue, flagValues, hasFlag } from '../options.ts';
import type { OptionSpec, parseOptions } from '../options.ts';
import { pastesIntoCode } from './pasted.ts';
import { afterOptions, isWrap, unknown } from './wrap.ts';
import type { Wrapper } from './wrap.ts';

/** Most items of a literal xargs input (or find start points) expanded into separate commands. */
const MAX_ITEMS = 16;

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
/** xargs [options] command: the command with the items appended, or with -I tokens replaced. */
export const xargs: Wrapper = (args, env, name) => {
  const r = afterOptions(args, XARGS, 0, name);
  if (isWrap(r)) return r;
  const inner = r.argv.length > 0 ? r.argv : [literalField('echo')];
  const fromFile = hasFlag(r.parsed, 'a', 'arg-file');
  // xargs -a FILE reads its items from FILE.
  for (const f of flagValues(r.parsed, 'a', 'arg-file')) env.read(f);
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
    // Names read at run time (a file list, find's output) spliced into shell code run as code.
    if ((text === null || fromFile) && pastesIntoCode(inner, token))
      return unknown('unanalyzable.dynamic-code', 'xargs pastes the items it reads into shell code');
    const argvs = items.map((item) => inner.map((f) => replaceIn(f, token, item)));
    return { kind: 'exec', argvs: argvs.length > 0 ? argvs : [inner], env: inherit };
  }
  return { kind: 'exec', argvs: [[...inner, ...items]], env: inherit };
};
