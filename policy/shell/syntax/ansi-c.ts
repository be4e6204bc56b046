/** Decoding of bash ANSI-C quoted strings (`$'...'`). */

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function hexRun(s: string, from: number, max: number): string {
  let end = from;
  while (end < s.length && end - from < max && /[0-9a-fA-F]/.test(s[end] ?? '')) end++;
  return s.slice(from, end);
}

/**
 * The value of the body of `$'...'` (without the `$'` and `'`), as bash computes it:
 * `\n`, `\t`, `\xHH`, `\NNN` (octal), `\uHHHH`, `\UHHHHHHHH`, `\cX` and the simple escapes.
 * Unknown escapes keep the backslash (as bash does). A NUL ends the string (bash truncates).
 */
export function decodeAnsiC(body: string): string {
  let out = '';
  let i = 0;
  while (i < body.length) {
    const ch = body[i] ?? '';
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      i++;
      continue;
    }
    const next = body[i + 1] ?? '';
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i += 2;
    } else if (next === 'x') {
      const hex = hexRun(body, i + 2, 2);
      if (hex === '') {
        out += '\\x';
        i += 2;
      } else {
        out += String.fromCharCode(parseInt(hex, 16));
        i += 2 + hex.length;
      }
    } else if (next === 'u' || next === 'U') {
      const hex = hexRun(body, i + 2, next === 'u' ? 4 : 8);
      if (hex === '') {
        out += '\\' + next;
        i += 2;
      } else {
        const cp = parseInt(hex, 16);
        out += cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
        i += 2 + hex.length;
      }
    } else if (/[0-7]/.test(next)) {
      let end = i + 1;
      while (end < body.length && end - (i + 1) < 3 && /[0-7]/.test(body[end] ?? '')) end++;
      out += String.fromCharCode(parseInt(body.slice(i + 1, end), 8) & 0xff);
      i = end;
    } else if (next === 'c' && i + 2 < body.length) {
      out += String.fromCharCode((body.charCodeAt(i + 2) & 0x1f) >>> 0);
      i += 3;
    } else {
      out += '\\' + next;
      i += 2;
    }
  }
  const nul = out.indexOf('\0');
  return nul >= 0 ? out.slice(0, nul) : out;
}
