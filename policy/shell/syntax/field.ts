/**
 * Fields: argv words after bash word expansion, as far as they can be known statically.
 * A field is built from atoms (one character, a dynamic part, or `$HOME`).
 */

/** One piece of a word before it becomes a field. */
export type Atom =
  /** One character; `q` when it was quoted or escaped; `w` its text with backslashes kept. */
  | { readonly k: 'c'; readonly c: string; readonly q: boolean; readonly w: string }
  /** A part only known at run time ($x, $(...), <(...)); `split` when it may become 0..n fields. */
  | { readonly k: 'dyn'; readonly split: boolean; readonly proc: boolean; readonly pids?: boolean }
  /** `$HOME` / `${HOME}`: the home directory, treated like a leading `~`. */
  | { readonly k: 'home' };

/** One argv word after expansion. */
export interface Field {
  /** The value after quote removal; null when any part is only known at run time. */
  readonly value: string | null;
  /** The value with backslashes kept as written (the Windows reading); null when dynamic. */
  readonly win: string | null;
  /** The value with quoted glob characters escaped by a backslash; null when dynamic. */
  readonly pattern: string | null;
  /** Literal text before the first dynamic part. */
  readonly prefix: string;
  /** True when the field may expand to zero or several fields (unquoted $x, "$@"). */
  readonly splittable: boolean;
  /** True when the field starts with an unquoted `~` (or `$HOME`): home-directory expansion. */
  readonly tilde: boolean;
  /** True when the field has an unquoted glob character (`*`, `?`, `[`). */
  readonly glob: boolean;
  /** True when the field is (or contains) a process substitution `<(...)` / `>(...)`. */
  readonly proc: boolean;
  /** True when any part of the word was quoted or escaped (so it is never a reserved word). */
  readonly quoted: boolean;
  /**
   * True when the only dynamic parts are `$(pgrep ...)`, `$(pidof ...)` or `$(lsof -t ...)`:
   * process ids (positive numbers), never `-1`.
   */
  readonly pids: boolean;
}

const GLOB_CHARS = '*?[';
const PATTERN_ESCAPE = '*?[]\\';

/** Builds a field from atoms (after brace expansion). */
export function fieldFromAtoms(atoms: readonly Atom[]): Field {
  let value = '';
  let win = '';
  let pattern = '';
  let prefix = '';
  let dynamic = false;
  let splittable = false;
  let glob = false;
  let proc = false;
  let tilde = false;
  let quoted = false;
  let pids = true;
  atoms.forEach((a, i) => {
    if (a.k === 'home') {
      const next = atoms[i + 1];
      const atEnd = next === undefined || (next.k === 'c' && next.c === '/');
      const prev = atoms[i - 1];
      // `f=@$HOME/x`, `--key=$HOME/x`, `a:$HOME/x`: the home directory right after a separator
      // stays static (the value then holds `~` there, read as home by the option tables).
      const afterSeparator = prev !== undefined && prev.k === 'c' && '=@:'.includes(prev.c);
      if ((i === 0 || (afterSeparator && !dynamic)) && atEnd) {
        tilde ||= i === 0;
        value += '~';
        win += '~';
        pattern += '~';
        prefix += '~';
      } else {
        dynamic = true;
      }
      return;
    }
    if (a.k === 'dyn') {
      dynamic = true;
      splittable ||= a.split;
      proc ||= a.proc;
      pids &&= a.pids === true;
      return;
    }
    if (i === 0 && a.c === '~' && !a.q) tilde = true;
    quoted ||= a.q;
    pids &&= /^[0-9\s]$/.test(a.c);
    if (!dynamic) prefix += a.c;
    value += a.c;
    win += a.w;
    pattern += a.q && PATTERN_ESCAPE.includes(a.c) ? '\\' + a.c : a.c;
    if (!a.q && GLOB_CHARS.includes(a.c)) glob = true;
  });
  return dynamic
    ? { value: null, win: null, pattern: null, prefix, splittable, tilde, glob, proc, quoted: true, pids }
    : { value, win, pattern, prefix, splittable: false, tilde, glob, proc: false, quoted, pids: false };
}

/** A field for a literal string that was quoted (no globbing, no tilde). */
export function literalField(value: string): Field {
  let pattern = '';
  for (const c of value) pattern += PATTERN_ESCAPE.includes(c) ? '\\' + c : c;
  return {
    value,
    win: value,
    pattern,
    prefix: value,
    splittable: false,
    tilde: false,
    glob: false,
    proc: false,
    quoted: true,
    pids: false,
  };
}

/** A field only known at run time (`pids`: known to be process ids). */
export function dynamicField(splittable: boolean, pids = false): Field {
  return {
    value: null,
    win: null,
    pattern: null,
    prefix: '',
    splittable,
    tilde: false,
    glob: false,
    proc: false,
    quoted: true,
    pids,
  };
}

/** True when the field is fully literal. */
export function isLiteral(f: Field): f is Field & { value: string; win: string; pattern: string } {
  return f.value !== null;
}

/**
 * The words xargs reads from literal text (split at blanks and newlines), or null when the text
 * has quotes or backslashes (xargs would interpret them).
 */
export function itemsOf(text: string): Field[] | null {
  if (/["'\\]/.test(text)) return null;
  return text
    .split(/\s+/)
    .filter((w) => w !== '')
    .map(printedField);
}

/**
 * A word printed by an earlier command (echo, printf) and read again (xargs): a leading `~/`
 * there came from a word bash expanded (`echo ~/x`), so it is read as the home path.
 */
export function printedField(text: string): Field {
  return { ...literalField(text), tilde: text === '~' || text.startsWith('~/') };
}
