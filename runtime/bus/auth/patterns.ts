/**
 * NATS subject-pattern algebra for permissions: whether a pattern matches a subject, and whether
 * one pattern covers another (every subject the second matches, the first matches too). `*`
 * matches exactly one token, `>` (last token only) one or more.
 */

/** The tokens of a subject or pattern; `null` when it is malformed (empty token, misplaced `>`). */
export function tokensOf(s: string): string[] | null {
  if (s.length === 0) return null;
  const t = s.split('.');
  for (const [i, tok] of t.entries()) {
    if (tok.length === 0 || /\s/.test(tok)) return null;
    if (tok === '>' && i !== t.length - 1) return null;
    if (tok !== '>' && tok !== '*' && /[*>]/.test(tok)) return null;
  }
  return t;
}

/** True when `pattern` matches the concrete `subject`. */
export function matches(pattern: string, subject: string): boolean {
  const p = tokensOf(pattern);
  const s = tokensOf(subject);
  if (p === null || s === null || s.some((t) => t === '*' || t === '>')) return false;
  for (const [i, pt] of p.entries()) {
    if (pt === '>') return s.length > i;
    if (i >= s.length) return false;
    if (pt !== '*' && pt !== s[i]) return false;
  }
  return p.length === s.length;
}

/** True when every subject `inner` matches is matched by `outer`. */
export function covers(outer: string, inner: string): boolean {
  const o = tokensOf(outer);
  const n = tokensOf(inner);
  if (o === null || n === null) return false;
  for (const [i, ot] of o.entries()) {
    if (ot === '>') return n.length > i;
    if (i >= n.length) return false;
    const nt = n[i] as string;
    if (nt === '>') return false;
    if (ot === '*') continue;
    if (nt === '*' || nt !== ot) return false;
  }
  return o.length === n.length;
}

/** True when some subject is matched by both patterns. */
export function overlaps(a: string, b: string): boolean {
  const x = tokensOf(a);
  const y = tokensOf(b);
  if (x === null || y === null) return false;
  for (let i = 0; ; i++) {
    const xt = x[i];
    const yt = y[i];
    if (xt === undefined || yt === undefined) return xt === yt;
    if (xt === '>' || yt === '>') return true;
    if (xt !== '*' && yt !== '*' && xt !== yt) return false;
  }
}
