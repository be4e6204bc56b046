/**
 * Word evaluation: a tree-sitter word node (word, string, raw_string, ansi_c_string,
 * concatenation, expansions, substitutions, ...) becomes the fields bash would produce, as far as
 * they are known statically. Anything only known at run time becomes a dynamic atom; node types
 * this module does not know are dynamic too (fail closed).
 */
import type { Node } from 'web-tree-sitter';
import { decodeAnsiC } from './ansi-c.ts';
import { braceExpand } from './brace.ts';
import { fieldFromAtoms } from './field.ts';
import type { Atom, Field } from './field.ts';

const DQ_ESCAPABLE = '$`"\\';

function pushUnquoted(text: string, out: Atom[]): void {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c !== '\\') {
      out.push({ k: 'c', c, q: false, w: c });
      continue;
    }
    const n = text[i + 1];
    if (n === undefined) {
      out.push({ k: 'c', c, q: false, w: c });
    } else if (n === '\n') {
      i++;
    } else {
      out.push({ k: 'c', c: n, q: true, w: c + n });
      i++;
    }
  }
}

function pushDoubleQuoted(text: string, out: Atom[]): void {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    const n = text[i + 1];
    if (c === '\\' && n === '\n') {
      i++;
    } else if (c === '\\' && n !== undefined && DQ_ESCAPABLE.includes(n)) {
      out.push({ k: 'c', c: n, q: true, w: c + n });
      i++;
    } else {
      out.push({ k: 'c', c, q: true, w: c });
    }
  }
}

function pushQuoted(text: string, out: Atom[]): void {
  for (const c of text) out.push({ k: 'c', c, q: true, w: c });
}

/** `$HOME`, `${HOME}` and `${HOME:-x}` / `${HOME:?x}` / `${HOME:=x}` (HOME is always set). */
function isHome(node: Node): boolean {
  const t = node.text;
  return t === '$HOME' || /^\$\{HOME(:?[-?=][^}]*)?\}$/.test(t);
}

/** True for `$(pgrep ...)`, `$(pidof ...)`, `$(lsof -t ...)`: the output is process ids. */
export function isPidCommand(command: Node): boolean {
  if (command.type !== 'command') return false;
  const words = command.namedChildren.filter((c): c is Node => c !== null).map((c) => c.text);
  const name = words[0];
  // `pgrep -v x` lists every other process: not a harmless pid list.
  if (name === 'pgrep') return !words.slice(1).some((w) => /^-[a-zA-Z]*v|^--inv/.test(w));
  if (name === 'pidof') return true;
  return name === 'lsof' && words.slice(1).some((w) => /^-[a-zA-Z]*t/.test(w));
}

function isPidSubstitution(node: Node): boolean {
  const statements = node.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');
  return statements.length === 1 && statements[0] !== undefined && isPidCommand(statements[0]);
}

/** Quoted expansions that still expand to several fields: "$@", "${a[@]}", "${@:2}", "${!p@}". */
function quotedSplits(text: string): boolean {
  return /^\$@$|^\$\{[!#]?@|\[@\]/.test(text);
}

function pushString(node: Node, out: Atom[]): void {
  const text = node.text;
  const base = node.startIndex;
  let cursor = 1;
  for (const child of node.children) {
    if (child === null) continue;
    const start = child.startIndex - base;
    const end = child.endIndex - base;
    if (start === 0 || end === text.length) {
      if (child.type === '"') continue;
    }
    if (start > cursor) pushDoubleQuoted(text.slice(cursor, start), out);
    if (child.type === 'string_content' || !child.isNamed) {
      pushDoubleQuoted(child.text, out);
    } else if ((child.type === 'simple_expansion' || child.type === 'expansion') && isHome(child)) {
      out.push({ k: 'home' });
    } else {
      const pids = child.type === 'command_substitution' && isPidSubstitution(child);
      out.push({ k: 'dyn', split: quotedSplits(child.text), proc: false, pids });
    }
    cursor = end;
  }
  const close = text.endsWith('"') && text.length > 1 ? text.length - 1 : text.length;
  if (close > cursor) pushDoubleQuoted(text.slice(cursor, close), out);
}

function pushAtoms(node: Node, out: Atom[]): void {
  switch (node.type) {
    case 'word':
      pushUnquoted(node.text, out);
      return;
    case 'raw_string': {
      const t = node.text;
      pushQuoted(t.length >= 2 ? t.slice(1, -1) : '', out);
      return;
    }
    case 'ansi_c_string': {
      const t = node.text;
      pushQuoted(decodeAnsiC(t.length >= 3 ? t.slice(2, -1) : ''), out);
      return;
    }
    case 'string':
      pushString(node, out);
      return;
    case 'translated_string': {
      const inner = node.namedChildren.find((c) => c?.type === 'string');
      if (inner) pushString(inner, out);
      else out.push({ k: 'dyn', split: false, proc: false });
      return;
    }
    case 'number':
      if (node.childCount === 0) pushUnquoted(node.text, out);
      else out.push({ k: 'dyn', split: true, proc: false });
      return;
    case 'brace_expression':
      pushUnquoted(node.text, out);
      return;
    case 'command_name':
    case 'concatenation': {
      const base = node.startIndex;
      const text = node.text;
      let cursor = 0;
      for (const child of node.children) {
        if (child === null) continue;
        const start = child.startIndex - base;
        if (start > cursor) pushUnquoted(text.slice(cursor, start), out);
        pushAtoms(child, out);
        cursor = child.endIndex - base;
      }
      if (cursor < text.length) pushUnquoted(text.slice(cursor), out);
      return;
    }
    case 'simple_expansion':
    case 'expansion':
      if (isHome(node)) out.push({ k: 'home' });
      else out.push({ k: 'dyn', split: true, proc: false });
      return;
    case 'process_substitution':
      out.push({ k: 'dyn', split: false, proc: true });
      return;
    case 'command_substitution':
      out.push({ k: 'dyn', split: true, proc: false, pids: isPidSubstitution(node) });
      return;
    default:
      if (!node.isNamed && node.childCount === 0) {
        pushUnquoted(node.text, out);
        return;
      }
      out.push({ k: 'dyn', split: true, proc: false });
  }
}

/** The atoms of one word node (before brace expansion). */
export function wordAtoms(node: Node): Atom[] {
  const out: Atom[] = [];
  pushAtoms(node, out);
  return out;
}

/**
 * The fields one word node expands to (brace expansion applied; tilde, quoting and `$HOME`
 * tracked). Throws ExpansionLimitError when brace expansion exceeds its bound.
 */
export function wordFields(node: Node): Field[] {
  if (node.type === 'word') {
    // tree-sitter-bash can merge `{ {` into one word; bash splits at every unescaped blank.
    const pieces = node.text.split(/(?<=(?:^|[^\\])(?:\\\\)*)[ \t\n]+/).filter((p) => p !== '');
    if (pieces.length > 1) {
      return pieces.flatMap((piece) => {
        const atoms: Atom[] = [];
        pushUnquoted(piece, atoms);
        return braceExpand(atoms).map(fieldFromAtoms);
      });
    }
  }
  return braceExpand(wordAtoms(node)).map(fieldFromAtoms);
}

/** True when a word node holds an unescaped blank (a grammar quirk bash would split). */
export function hasUnescapedBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === ' ' || c === '\t' || c === '\n') return true;
  }
  return false;
}
