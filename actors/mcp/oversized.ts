/**
 * Which request an oversized server message answers, read from the few bytes kept of it (its
 * first and last bytes): the message itself is never held whole. Only a top-level `"id"` is
 * trusted: the first key after the opening brace (or after `"jsonrpc":"2.0"`), or the last key
 * before the closing brace (or before a trailing `"jsonrpc":"2.0"`). An `"id"` nested in the
 * result is neither, so it is never taken for the answer's id.
 */

/** Bytes kept of the start and of the end of a message that is discarded. */
export const KEPT_EDGE_BYTES = 256;

const ID = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")`;
const JSONRPC = String.raw`"jsonrpc"\s*:\s*"2\.0"`;
const HEAD = new RegExp(String.raw`^\s*\{\s*(?:${JSONRPC}\s*,\s*)?"id"\s*:\s*${ID}\s*[,}]`);
const TAIL = new RegExp(String.raw`,\s*"id"\s*:\s*${ID}\s*(?:,\s*${JSONRPC}\s*)?\}\s*$`);

function parseId(raw: string): string | number | null {
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'number' || typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** The JSON-RPC id of a message known only by its first and last bytes, or null when unsure. */
export function oversizedMessageId(head: Buffer, tail: Buffer): string | number | null {
  const start = HEAD.exec(head.toString('latin1'));
  if (start?.[1] !== undefined) return parseId(start[1]);
  const end = TAIL.exec(tail.toString('latin1').replace(/\r$/, ''));
  if (end?.[1] !== undefined) return parseId(end[1]);
  return null;
}
