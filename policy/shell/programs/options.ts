/**
 * A getopt-like option parser over fields, shared by wrappers and rules. It normalizes flag
 * spellings (`-rf`, `-fr`, `-r -f`, `--recursive`, unique `--recur` abbreviations, `--`) and
 * records when a run-time value stood where an option could be (so rules can fail closed).
 */
import { literalField } from '../syntax/field.ts';
import type { Field } from '../syntax/field.ts';

/** How one command parses its options. */
export interface OptionSpec {
  /** Short option letters that take a value (attached `-uroot` or the next field). */
  readonly shortValue?: string;
  /** Short option letters whose value is optional and only attached (`-i{}`). */
  readonly shortOptional?: string;
  /** Long option names (without `--`) that take a value (`--user=x` or `--user x`). */
  readonly longValue?: readonly string[];
  /** Every other known long option name, for unique-prefix abbreviation. */
  readonly longFlags?: readonly string[];
  /** Stop at the first operand (POSIX order; wrappers), instead of GNU permutation. */
  readonly stopAtOperand?: boolean;
  /** `-10` style numeric options (nice, kill) are options named by their digits. */
  readonly numeric?: boolean;
  /** `+x` words are options too (shells). */
  readonly plus?: boolean;
}

/** The result of option parsing. */
export interface ParsedOptions {
  /** Options seen, by normalized name (letter or long name), with their values (null: none). */
  readonly flags: ReadonlyMap<string, readonly (Field | null)[]>;
  /** Operands in order (including any after `--`). */
  readonly operands: readonly Field[];
  /** True when a dynamic field stood where an option could be. */
  readonly dynamicOption: boolean;
  /** True when a splittable dynamic field (may become several words) stood anywhere. */
  readonly splittable: boolean;
  /** With stopAtOperand: index (into the parsed fields) of the first operand, or fields.length. */
  readonly rest: number;
  /** True when `--` ended the options. */
  readonly dashDash: boolean;
}

/** An option value cut from a longer word; a leading `~/` there (or `$HOME`, kept as `~`) is home. */
function valueOf(text: string): Field {
  return { ...literalField(text), tilde: text === '~' || text.startsWith('~/') };
}

/** Resolves a long option name: exact, else a unique prefix of a known name, else as given. */
export function resolveLong(name: string, spec: OptionSpec): string {
  const known = [...(spec.longValue ?? []), ...(spec.longFlags ?? [])];
  if (known.includes(name)) return name;
  const matches = known.filter((k) => k.startsWith(name));
  return matches.length === 1 ? (matches[0] ?? name) : name;
}

/** Parses `fields` (the arguments after the program name) with `spec`. */
export function parseOptions(fields: readonly Field[], spec: OptionSpec): ParsedOptions {
  const flags = new Map<string, (Field | null)[]>();
  const operands: Field[] = [];
  const add = (name: string, value: Field | null): void => {
    const list = flags.get(name);
    if (list) list.push(value);
    else flags.set(name, [value]);
  };
  let dynamicOption = false;
  let splittable = false;
  let optionsEnded = false;
  let dashDash = false;
  let rest = fields.length;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as Field;
    if (f.splittable) splittable = true;
    const v = f.value;
    if (optionsEnded) {
      operands.push(f);
      continue;
    }
    if (v === null) {
      if (f.prefix.startsWith('-') || f.prefix === '' || (spec.plus && f.prefix.startsWith('+'))) {
        dynamicOption = true;
      }
      if (f.prefix.startsWith('-')) continue;
      operands.push(f);
      if (spec.stopAtOperand) {
        optionsEnded = true;
        rest = i;
      }
      continue;
    }
    if (v === '--') {
      optionsEnded = true;
      dashDash = true;
      if (spec.stopAtOperand) rest = i + 1;
      continue;
    }
    const isPlus = spec.plus === true && v.startsWith('+') && v.length > 1;
    // An unquoted glob at the start of a word may expand to names like `-rf`.
    if (f.glob && f.pattern !== null && /^[*?[]/.test(f.pattern)) dynamicOption = true;
    if ((!v.startsWith('-') || v === '-') && !isPlus) {
      operands.push(f);
      if (spec.stopAtOperand) {
        optionsEnded = true;
        rest = i;
      }
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = resolveLong(eq < 0 ? v.slice(2) : v.slice(2, eq), spec);
      if (eq >= 0) {
        add(name, valueOf(v.slice(eq + 1)));
      } else if (spec.longValue?.includes(name)) {
        const next = fields[i + 1] ?? null;
        add(name, next);
        i++;
      } else {
        add(name, null);
      }
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(v)) {
      add(v.slice(1), null);
      continue;
    }
    const sign = v[0] === '+' ? '+' : '';
    for (let j = 1; j < v.length; j++) {
      const c = v[j] ?? '';
      const name = sign + c;
      if (spec.shortValue?.includes(c)) {
        const attached = v.slice(j + 1);
        if (attached !== '') {
          add(name, valueOf(attached));
        } else {
          add(name, fields[i + 1] ?? null);
          i++;
        }
        break;
      }
      if (spec.shortOptional?.includes(c)) {
        const attached = v.slice(j + 1);
        add(name, attached === '' ? null : valueOf(attached));
        break;
      }
      add(name, null);
    }
  }
  if (!spec.stopAtOperand) rest = fields.length;
  return { flags, operands, dynamicOption, splittable, rest, dashDash };
}

/** True when any of `names` was given. */
export function hasFlag(p: ParsedOptions, ...names: string[]): boolean {
  return names.some((n) => p.flags.has(n));
}

/** The last value given for any of `names`, or undefined. */
export function flagValue(p: ParsedOptions, ...names: string[]): Field | null | undefined {
  let found: Field | null | undefined;
  for (const n of names) {
    const list = p.flags.get(n);
    if (list && list.length > 0) found = list[list.length - 1];
  }
  return found;
}

/** Every value given for any of `names`. */
export function flagValues(p: ParsedOptions, ...names: string[]): Field[] {
  const out: Field[] = [];
  for (const n of names) for (const v of p.flags.get(n) ?? []) if (v) out.push(v);
  return out;
}

/** rsync's options: one table for the hardline rule and the file-argument collector. */
export const RSYNC_OPTIONS: OptionSpec = {
  shortValue: 'efTBM',
  longValue: [
    'rsh',
    'filter',
    'exclude',
    'include',
    'exclude-from',
    'include-from',
    'files-from',
    'temp-dir',
    'partial-dir',
    'backup-dir',
    'suffix',
    'chmod',
    'chown',
    'remote-option',
    'rsync-path',
    'log-file',
    'out-format',
    'password-file',
    'port',
    'timeout',
    'bwlimit',
    'max-size',
    'min-size',
    'compare-dest',
    'copy-dest',
    'link-dest',
    'block-size',
    'info',
    'debug',
    'iconv',
    'usermap',
    'groupmap',
  ],
  longFlags: [
    'delete',
    'delete-before',
    'delete-during',
    'delete-delay',
    'delete-after',
    'delete-excluded',
    'del',
    'remove-source-files',
    'recursive',
    'archive',
  ],
};

/** rm's options: one table for the hardline rule and the file-argument collector. */
export const RM_OPTIONS: OptionSpec = {
  longFlags: [
    'recursive',
    'force',
    'interactive',
    'one-file-system',
    'no-preserve-root',
    'preserve-root',
    'dir',
    'verbose',
    'help',
    'version',
  ],
};
