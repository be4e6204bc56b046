import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

type Canonicalize = (input: unknown) => string | undefined;
// The package is CommonJS (`module.exports = fn`) typed as an ES default export: Node's ESM loader
// gives the function itself, a bundler or TypeScript's view may give `{ default: fn }`.
const canonicalize: Canonicalize =
  typeof canonicalizeModule === 'function'
    ? (canonicalizeModule as Canonicalize)
    : (canonicalizeModule as unknown as { default: Canonicalize }).default;

/** A SHA-256 in lowercase hex: what approvals, ledger events and `audit why` carry. */
export const HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The RFC 8785 (JSON Canonicalization Scheme) text of a call's arguments: object keys sorted by
 * UTF-16 code units, numbers in their shortest form, strings exactly as given — no Unicode
 * normalization, so two spellings that merely look alike (`é` and `e` + U+0301) stay different.
 * Absent arguments are `null`. Null when the value has no JSON form (NaN, Infinity, a cycle,
 * a BigInt): such arguments can never match an approval (fail closed).
 */
export function canonicalArgs(args: unknown): string | null {
  try {
    const text = canonicalize(args === undefined ? null : args);
    return typeof text === 'string' ? text : null;
  } catch {
    return null;
  }
}

/**
 * The SHA-256 (hex) of `canonicalArgs(args)`: equal exactly when the two argument values are
 * equal as JSON data, whatever the order of their keys. Null when the value has no JSON form.
 */
export function argsHash(args: unknown): string | null {
  const text = canonicalArgs(args);
  return text === null ? null : sha256Hex(text);
}

/** The SHA-256 of a UTF-8 text, in lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
