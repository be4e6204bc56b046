/**
 * Why arguments failed their schema, in words safe to show, log and audit: argument paths and
 * what the schema expected, with the JSON type of what arrived — never an argument's value.
 */
import type { z } from 'zod';

/** Longest detail text a Decision carries. */
export const MAX_DETAIL = 400;

/** Most issues named in one detail. */
const MAX_ISSUES = 3;

/**
 * A key shown as written only when it looks like a word (letters and `_`, at most 24): a key
 * with digits or of any length may be data — a token sent as a key.
 */
const SAFE_KEY = /^[A-Za-z_]{1,24}$/;

function segment(key: PropertyKey, first: boolean): string {
  if (typeof key === 'number') return `[${key}]`;
  if (typeof key === 'string' && SAFE_KEY.test(key)) return first ? key : `.${key}`;
  return '[…]';
}

/** An argument path such as `args[0]` or `headers[…]`; `(arguments)` for the whole object. */
export function argumentPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(arguments)';
  return path.map((k, i) => segment(k, i === 0)).join('');
}

/** The JSON type of a value: `string`, `number`, `boolean`, `null`, `array`, `object`, or `missing`. */
export function jsonType(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'bigint') return 'number';
  return typeof value;
}

function at(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || typeof k === 'symbol') return undefined;
    if (!Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function quoteList(values: readonly unknown[]): string {
  const shown = values.slice(0, 8).map((v) => JSON.stringify(v) ?? String(v));
  return shown.join(', ') + (values.length > 8 ? ', …' : '');
}

function limit(
  issue: { origin?: unknown; maximum?: unknown; minimum?: unknown },
  bound: 'at most' | 'at least',
): string {
  const n = String(bound === 'at most' ? issue.maximum : issue.minimum);
  const unit =
    issue.origin === 'string'
      ? ' characters'
      : issue.origin === 'array' || issue.origin === 'set'
        ? ' items'
        : issue.origin === 'object'
          ? ' keys'
          : '';
  return `expected ${bound} ${n}${unit}`;
}

/** One issue as `path: what was expected` (values from the schema only, types from the input). */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const where = argumentPath(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      return `${where}: expected ${issue.expected}, got ${jsonType(at(input, issue.path))}`;
    case 'too_big':
      return `${where}: ${limit(issue, 'at most')}`;
    case 'too_small':
      return `${where}: ${limit(issue, 'at least')}`;
    case 'invalid_value':
      return `${where}: expected one of ${quoteList(issue.values)}`;
    case 'invalid_format':
      return `${where}: expected the ${issue.format} format`;
    case 'not_multiple_of':
      return `${where}: expected a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys': {
      const keys = issue.keys.map((k) => (SAFE_KEY.test(k) ? k : '…'));
      return `${where}: unexpected ${keys.length === 1 ? 'argument' : 'arguments'} ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`;
    }
    case 'invalid_key':
      return `${where}: a key is invalid`;
    case 'invalid_element':
      return `${where}: an element is invalid`;
    case 'invalid_union':
      return `${where}: matches none of the allowed shapes`;
    case 'custom':
      // Refinement messages are written by the tool's schema author (never built from input).
      return `${where}: ${issue.message.slice(0, 160)}`;
  }
}

/** Up to three issues joined by `; `, at most MAX_DETAIL characters. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string {
  const parts = issues.slice(0, MAX_ISSUES).map((i) => describeIssue(i, input));
  if (issues.length > MAX_ISSUES) parts.push(`and ${issues.length - MAX_ISSUES} more`);
  const text = parts.join('; ');
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
}
