/** Bash brace expansion (`a{b,c}d`, `{1..3}`, `{a..e..2}`) over atoms; runs before every other expansion. */
import type { Atom } from './field.ts';

/** Thrown when an expansion would produce more fields than the analysis bound. */
export class ExpansionLimitError extends Error {
  constructor() {
    super('brace expansion exceeds the analysis bound');
  }
}

/** Most fields one word may expand to before analysis gives up (fail closed). */
export const MAX_BRACE_FIELDS = 512;

function isCh(a: Atom | undefined, c: string): boolean {
  return a !== undefined && a.k === 'c' && !a.q && a.c === c;
}

function literalText(atoms: readonly Atom[]): string | null {
  let s = '';
  for (const a of atoms) {
    if (a.k !== 'c') return null;
    s += a.c;
  }
  return s;
}

function charAtoms(s: string): Atom[] {
  return [...s].map((c) => ({ k: 'c', c, q: true, w: c }) as const);
}

/** The members of a `{x..y[..step]}` sequence, or null when the body is not a sequence. */
function sequence(body: readonly Atom[]): Atom[][] | null {
  const text = literalText(body);
  if (text === null) return null;
  const num = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(text);
  const chr = /^([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?$/.exec(text);
  const m = num ?? chr;
  if (m === null) return null;
  const from = num ? Number(m[1]) : (m[1] ?? 'a').charCodeAt(0);
  const to = num ? Number(m[2]) : (m[2] ?? 'a').charCodeAt(0);
  const step = Math.abs(Number(m[3] ?? '1')) || 1;
  const count = Math.floor(Math.abs(to - from) / step) + 1;
  if (count > MAX_BRACE_FIELDS) throw new ExpansionLimitError();
  const width = num && /^-?0\d/.test(m[1] ?? '') ? (m[1] ?? '').length : 0;
  const out: Atom[][] = [];
  for (let i = 0, v = from; i < count; i++, v += to >= from ? step : -step) {
    const s = num ? String(v).padStart(width, '0') : String.fromCharCode(v);
    out.push(charAtoms(s));
  }
  return out;
}

/** Alternatives of a brace body split at top-level commas, or null when there is no comma. */
function alternatives(body: readonly Atom[]): Atom[][] | null {
  const parts: Atom[][] = [[]];
  let depth = 0;
  let comma = false;
  for (const a of body) {
    if (isCh(a, '{')) depth++;
    else if (isCh(a, '}')) depth--;
    if (depth === 0 && isCh(a, ',')) {
      comma = true;
      parts.push([]);
      continue;
    }
    parts[parts.length - 1]?.push(a);
  }
  return comma ? parts : null;
}

/**
 * Expands the first brace group of `atoms` (and recursively the rest). Bounded by
 * MAX_BRACE_FIELDS; throws ExpansionLimitError beyond it.
 */
export function braceExpand(atoms: readonly Atom[]): Atom[][] {
  const out: Atom[][] = [];
  expandInto(atoms, 0, out);
  return out;
}

function expandInto(atoms: readonly Atom[], from: number, out: Atom[][]): void {
  for (let i = from; i < atoms.length; i++) {
    if (!isCh(atoms[i], '{')) continue;
    if (i > 0 && isCh(atoms[i - 1], '$')) continue;
    let depth = 0;
    let close = -1;
    for (let j = i; j < atoms.length; j++) {
      if (isCh(atoms[j], '{')) depth++;
      else if (isCh(atoms[j], '}') && --depth === 0) {
        close = j;
        break;
      }
    }
    if (close < 0) break;
    const body = atoms.slice(i + 1, close);
    const alts = alternatives(body) ?? sequence(body);
    if (alts === null) continue;
    const head = atoms.slice(0, i);
    const tail = atoms.slice(close + 1);
    for (const alt of alts) {
      expandInto([...head, ...alt, ...tail], i, out);
      if (out.length > MAX_BRACE_FIELDS) throw new ExpansionLimitError();
    }
    return;
  }
  out.push([...atoms]);
}
