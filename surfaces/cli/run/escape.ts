// C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text
// (bidi overrides and isolates, zero-width marks, the BOM).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/gu;

function code(ch: string): string {
  const n = ch.codePointAt(0) ?? 0;
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
}

/**
 * Text made safe to print to a terminal: every control character (escape sequences included)
 * and every invisible reordering character becomes a visible `\xNN` / `\u{NNNN}` escape.
 * Newlines and tabs are kept only when `multiline` is set; otherwise they are escaped too.
 */
export function escapeForTerminal(text: string, multiline = false): string {
  const escaped = text.replace(UNSAFE, code);
  return multiline ? escaped : escaped.replace(/[\n\t]/g, (c) => (c === '\n' ? '\\n' : '\\t'));
}

/** The text cut to `max` characters (marked with an ellipsis), then escaped for one terminal line. */
export function oneLine(text: string, max = 160): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return escapeForTerminal(cut);
}

/** The text with every unsafe character (as above) replaced by a space. */
export function stripUnsafe(text: string): string {
  return text.replace(UNSAFE, ' ');
}
