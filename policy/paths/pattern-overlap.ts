/**
 * Whether two globs can match a common path, decided per path segment: used to treat an
 * unquoted shell glob (`~/.ss?/id_rsa`, `~/.[n]etrc`) as every path it could match, and a
 * recursive walk of a directory as every path beneath it. Conservative where a glob feature is
 * not modelled (braces, extglobs): such a segment is taken to match anything.
 */

type Tok =
  | { readonly k: 'lit'; readonly c: string }
  | { readonly k: 'one' }
  | { readonly k: 'star' }
  | { readonly k: 'set'; readonly test: (c: string) => boolean; readonly chars: string };
type Segment =
  { readonly k: 'globstar' } | { readonly k: 'any' } | { readonly k: 'toks'; readonly toks: readonly Tok[] };

/** How a glob's wildcards treat a leading dot: bash's `*` never matches it, picomatch's `dot` does. */
export type DotRule = 'shell' | 'dot';

function fold(c: string): string {
  return c.normalize('NFKC').toLowerCase();
}

function parseSet(seg: string, start: number): { tok: Tok; end: number } | null {
  let i = start + 1;
  const neg = seg[i] === '!' || seg[i] === '^';
  if (neg) i++;
  const items: (string | [string, string])[] = [];
  let first = true;
  for (; i < seg.length; i++) {
    let c = seg[i] ?? '';
    if (c === ']' && !first) {
      const chars = items.map((x) => (typeof x === 'string' ? x : x[0])).join('');
      const inSet = (ch: string): boolean =>
        items.some((x) => (typeof x === 'string' ? fold(x) === ch : ch >= fold(x[0]) && ch <= fold(x[1])));
      return { tok: { k: 'set', test: (ch) => inSet(fold(ch)) !== neg, chars: neg ? '' : chars }, end: i };
    }
    first = false;
    if (c === '\\' && i + 1 < seg.length) c = seg[++i] ?? '';
    if (seg[i + 1] === '-' && seg[i + 2] !== undefined && seg[i + 2] !== ']') {
      items.push([c, seg[i + 2] ?? c]);
      i += 2;
    } else items.push(c);
  }
  return null;
}

function parseSegment(seg: string): Segment {
  if (seg === '**') return { k: 'globstar' };
  // POSIX classes and equivalence classes inside brackets (`[[:alpha:]]`, `[[=a=]]`): any name.
  if (/\[[:=.]/.test(seg)) return { k: 'any' };
  const toks: Tok[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] ?? '';
    if (c === '\\') {
      const n = seg[i + 1];
      if (n !== undefined) {
        toks.push({ k: 'lit', c: fold(n) });
        i++;
      }
    } else if (c === '*') {
      if (toks.at(-1)?.k !== 'star') toks.push({ k: 'star' });
    } else if (c === '?') toks.push({ k: 'one' });
    else if (c === '[') {
      const set = parseSet(seg, i);
      if (set === null) toks.push({ k: 'lit', c: '[' });
      else {
        toks.push(set.tok);
        i = set.end;
      }
    } else if ('{}()|+@!'.includes(c)) return { k: 'any' };
    else toks.push({ k: 'lit', c: fold(c) });
  }
  return { k: 'toks', toks };
}

/** Splits a `/`-separated glob into segments (empty segments dropped, a leading `/` kept as ''). */
export function segmentsOf(glob: string): Segment[] {
  return glob
    .split('/')
    .filter((s, i) => s !== '' || i === 0)
    .map((s) => (s === '' ? { k: 'toks', toks: [] } : parseSegment(s)));
}

function charsMeet(a: Tok, b: Tok): boolean {
  if (a.k === 'one' || b.k === 'one') return true;
  if (a.k === 'lit' && b.k === 'lit') return a.c === b.c;
  if (a.k === 'lit' && b.k === 'set') return b.test(a.c);
  if (a.k === 'set' && b.k === 'lit') return a.test(b.c);
  if (a.k === 'set' && b.k === 'set') {
    if (a.chars === '' || b.chars === '') return true;
    return [...a.chars].some((c) => b.test(c)) || [...b.chars].some((c) => a.test(c));
  }
  return false;
}

/** True when a leading wildcard of the shell side cannot match the leading dot of the other. */
function dotBlocked(shell: readonly Tok[], other: readonly Tok[]): boolean {
  const s = shell[0];
  const o = other[0];
  if (s === undefined || s.k === 'lit') return false;
  return o?.k === 'lit' && o.c === '.';
}

function segmentsMeet(a: readonly Tok[], b: readonly Tok[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    const x = a[i];
    const y = b[j];
    if (x === undefined && y === undefined) r = true;
    else if (x?.k === 'star') r = go(i + 1, j) || (y !== undefined && go(i, j + 1));
    else if (y?.k === 'star') r = go(i, j + 1) || (x !== undefined && go(i + 1, j));
    else if (x === undefined || y === undefined) r = false;
    else r = charsMeet(x, y) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/**
 * True when some path can match both `shellGlob` (bash rules: a wildcard never matches a
 * leading dot) and `ruleGlob` (picomatch with `dot`), case-insensitively.
 */
export function globsOverlap(shellGlob: string, ruleGlob: string, beneath = false): boolean {
  const a = segmentsOf(shellGlob);
  if (beneath) a.push({ k: 'globstar' });
  const b = segmentsOf(ruleGlob);
  const shellStars = beneath ? a.length - 1 : a.length;
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    const x = a[i];
    const y = b[j];
    if (x === undefined && y === undefined) r = true;
    else if (x?.k === 'globstar') r = go(i + 1, j) || (y !== undefined && go(i, j + 1));
    else if (y?.k === 'globstar') r = go(i, j + 1) || (x !== undefined && go(i + 1, j));
    else if (x === undefined || y === undefined) r = false;
    else if (x.k === 'any' || y.k === 'any') r = go(i + 1, j + 1);
    else if (i < shellStars && dotBlocked(x.toks, y.toks)) r = false;
    else r = segmentsMeet(x.toks, y.toks) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** True when the glob has an unescaped wildcard or set. */
export function hasGlob(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '*' || c === '?' || c === '[') return true;
  }
  return false;
}

/** Removes glob escapes from a literal segment text. */
export function unescapeGlob(text: string): string {
  return text.replace(/\\(.)/g, '$1');
}
