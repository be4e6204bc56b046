/**
 * The one place a tool's result or error becomes what the model sees: redacted first (so a
 * secret cannot survive by being cut in half), then serialized and size-capped.
 */
import { ToolError } from './types.ts';

/** What redacts: `store/redaction`'s `Redactor` fits. */
export interface ObservationRedactor {
  redact(value: unknown): unknown;
}

/** The outcome of one execution. */
export type ToolOutcome =
  { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: unknown };

/** The model-visible observation. */
export interface Observation {
  readonly ok: boolean;
  /** JSON text of the redacted payload, at most `maxBytes` UTF-8 bytes. */
  readonly content: string;
  /** Whether the payload was shortened to fit. */
  readonly truncated: boolean;
  /** UTF-8 size of the full redacted payload before capping. */
  readonly originalBytes: number;
}

/** Options of `toObservation`. */
export interface ObservationOptions {
  /** Default 64 KiB. */
  readonly maxBytes?: number;
}

/** The default cap of an observation's serialized size. */
export const DEFAULT_OBSERVATION_BYTES = 64 * 1024;

const SNAKE = /^[a-z][a-z0-9_]*$/;

/**
 * The model-visible shape of an error: `{ error: { code, message, details? } }`. A `ToolError`
 * keeps its code and details; another error with a snake_case `code` keeps that code; anything
 * else is `tool_failed`. Stacks and causes are never included.
 */
export function errorPayload(error: unknown): {
  error: { code: string; message: string; details?: unknown };
} {
  if (error instanceof ToolError) {
    const base = { code: error.code, message: error.message };
    return { error: error.details === undefined ? base : { ...base, details: error.details } };
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      error: {
        code: typeof code === 'string' && SNAKE.test(code) ? code : 'tool_failed',
        message: error.message,
      },
    };
  }
  return { error: { code: 'tool_failed', message: String(error) } };
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Cuts `text` to at most `max` UTF-8 bytes on a character boundary. */
function cutUtf8(text: string, max: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= max) return text;
  let end = max;
  // Step back off UTF-8 continuation bytes so no character is split.
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return buffer.subarray(0, end).toString('utf8');
}

interface StringSlot {
  readonly holder: Record<string, unknown> | unknown[];
  readonly key: string | number;
  readonly length: number;
}

function stringSlots(value: unknown, out: StringSlot[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') out.push({ holder: value, key: i, length: item.length });
      else stringSlots(item, out);
    });
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const [key, item] of Object.entries(record)) {
      if (typeof item === 'string') out.push({ holder: record, key, length: item.length });
      else stringSlots(item, out);
    }
  }
}

function marker(removed: number): string {
  return `…[truncated ${removed} chars]`;
}

/** `text` cut to its first `k` UTF-16 units, never splitting a surrogate pair. */
function prefix(text: string, k: number): string {
  const code = text.charCodeAt(k - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? k - 1 : k);
}

/**
 * The longest prefix of `text` that, with the marker of what it leaves out, serializes (as a
 * JSON string) in at most `allowed` UTF-8 bytes; null when not even the marker alone fits.
 * A binary search over the prefix length: serialized size only grows with it.
 */
function fittingPrefix(text: string, allowed: number): string | null {
  const size = (k: number): number => {
    const kept = prefix(text, k);
    return bytes(JSON.stringify(kept + marker(text.length - kept.length)));
  };
  if (size(0) > allowed) return null;
  let lo = 0;
  // Every character takes at least one byte: no longer prefix can fit.
  let hi = Math.min(text.length - 1, allowed);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (size(mid) <= allowed) lo = mid;
    else hi = mid - 1;
  }
  const kept = prefix(text, lo);
  return kept + marker(text.length - kept.length);
}

/**
 * Shrinks the longest strings inside `payload` (a JSON-compatible copy, mutated) until its
 * serialization fits `max`, keeping the JSON valid: each string cut keeps the longest prefix
 * that fits what is left of the budget, so a payload dominated by one large string keeps
 * nearly the whole budget of it. Returns null when that is not enough (for example a huge
 * array of short strings).
 */
function shrinkStrings(payload: unknown, max: number): string | null {
  if (typeof payload === 'string') {
    const fitted = fittingPrefix(payload, max);
    return fitted === null ? null : JSON.stringify(fitted);
  }
  for (let round = 0; round < 16; round += 1) {
    const text = JSON.stringify(payload) ?? 'null';
    const excess = bytes(text) - max;
    if (excess <= 0) return text;
    const slots: StringSlot[] = [];
    stringSlots(payload, slots);
    slots.sort((a, b) => b.length - a.length);
    const longest = slots[0];
    if (longest === undefined || longest.length < 256) return null;
    const holder = longest.holder as Record<string | number, unknown>;
    const current = holder[longest.key] as string;
    const own = bytes(JSON.stringify(current));
    // What this string may take: its own size less the excess, or the bare marker when that is
    // not enough (the next round then cuts the next longest).
    holder[longest.key] = fittingPrefix(current, own - excess) ?? marker(current.length);
  }
  return null;
}

/**
 * Turns an outcome into the model-visible observation. Guarantees: the payload (result, or the
 * `errorPayload` of the error) is passed through `redactor.redact` before anything else, so
 * every registered secret and sensitive key is scrubbed wherever it appears (also inside an
 * error message or details); `content` is at most `maxBytes` UTF-8 bytes — long strings are
 * shortened in place with a `…[truncated N chars]` marker keeping the JSON valid, and as a last
 * resort the text itself is cut and ends with `…[truncated: showing X of Y bytes]` (then
 * it is no longer valid JSON).
 */
export function toObservation(
  outcome: ToolOutcome,
  redactor: ObservationRedactor,
  options: ObservationOptions = {},
): Observation {
  const maxBytes = options.maxBytes ?? DEFAULT_OBSERVATION_BYTES;
  const payload = redactor.redact(outcome.ok ? outcome.result : errorPayload(outcome.error));
  const full = JSON.stringify(payload) ?? 'null';
  const originalBytes = bytes(full);
  if (originalBytes <= maxBytes) return { ok: outcome.ok, content: full, truncated: false, originalBytes };
  const shrunk = shrinkStrings(JSON.parse(full) as unknown, maxBytes);
  if (shrunk !== null && bytes(shrunk) <= maxBytes) {
    return { ok: outcome.ok, content: shrunk, truncated: true, originalBytes };
  }
  const cut = cutUtf8(full, Math.max(0, maxBytes - 80));
  const content = `${cut}…[truncated: showing ${bytes(cut)} of ${originalBytes} bytes]`;
  return { ok: outcome.ok, content, truncated: true, originalBytes };
}
