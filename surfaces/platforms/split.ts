/** Whether `i` falls between the two halves of a UTF-16 surrogate pair in `text`. */
function insidePair(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  const before = text.charCodeAt(i - 1);
  const after = text.charCodeAt(i);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/**
 * Splits a message into parts of at most `limit` UTF-16 code units (platform limits such as
 * Telegram's 4096 count at most that many). Each cut prefers the last paragraph break, then
 * line break, then space in the second half of the window; a hard cut never falls inside a
 * surrogate pair. Concatenating the parts gives the text back exactly. An empty text is one
 * empty part.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (!Number.isInteger(limit) || limit < 2)
    throw new RangeError(`message limit must be at least 2, got ${limit}`);
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = -1;
    const window = rest.slice(0, limit);
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(sep);
      if (at >= limit / 2) {
        cut = at + sep.length;
        break;
      }
    }
    if (cut === -1) cut = insidePair(rest, limit) ? limit - 1 : limit;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  parts.push(rest);
  return parts;
}
