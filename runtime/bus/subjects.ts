import { BusError, BusErrorCode } from './errors.ts';

/** Every subject of this protocol version starts with this prefix. */
export const SUBJECT_PREFIX = 'snotra.v1';

declare const subjectBrand: unique symbol;
declare const patternBrand: unique symbol;

/** A concrete, validated `snotra.v1.…` subject: safe to publish to. */
export type Subject = string & { readonly [subjectBrand]: true; readonly [patternBrand]: true };
/** A validated `snotra.v1.…` subject that may contain `*` / trailing `>` wildcards: safe to subscribe to. */
export type SubjectPattern = string & { readonly [patternBrand]: true };

/** Wildcard tokens accepted by {@link subjectPattern}: `*` matches one token, `>` the rest (last only). */
export const Wildcard = { One: '*', Rest: '>' } as const;
/** One of the {@link Wildcard} tokens. */
export type Wildcard = (typeof Wildcard)[keyof typeof Wildcard];

const MAX_TOKEN_LENGTH = 128;
/** Characters never allowed in a token: the NATS separators and wildcards, whitespace, control and format characters. */
const FORBIDDEN = /[.*>\s\p{Cc}\p{Cf}]/u;

function checkToken(token: unknown, index: number): string {
  if (
    typeof token !== 'string' ||
    token.length === 0 ||
    token.length > MAX_TOKEN_LENGTH ||
    FORBIDDEN.test(token)
  ) {
    throw new BusError(
      BusErrorCode.InvalidSubject,
      `subject token #${index + 1} is invalid: it must be 1-${MAX_TOKEN_LENGTH} characters without '.', '*', '>', whitespace or control characters`,
      { details: { index } },
    );
  }
  return token;
}

/**
 * Builds `snotra.v1.<t1>.<t2>…` from one or more tokens. Guarantees the result names exactly one
 * subject: a token containing `.`, `*`, `>`, whitespace or control characters (a subject injection) or
 * an empty token throws `bus_invalid_subject`.
 */
export function subject(...tokens: readonly string[]): Subject {
  if (tokens.length === 0)
    throw new BusError(BusErrorCode.InvalidSubject, 'a subject needs at least one token');
  return `${SUBJECT_PREFIX}.${tokens.map(checkToken).join('.')}` as Subject;
}

/**
 * Like {@link subject} but a token may also be exactly `*` ({@link Wildcard.One}) or, as the last token
 * only, `>` ({@link Wildcard.Rest}). Partial wildcards (`ab*`) are rejected.
 */
export function subjectPattern(...tokens: readonly (string | Wildcard)[]): SubjectPattern {
  if (tokens.length === 0)
    throw new BusError(BusErrorCode.InvalidSubject, 'a subject needs at least one token');
  const parts = tokens.map((t, i) => {
    if (t === Wildcard.One) return t;
    if (t === Wildcard.Rest) {
      if (i !== tokens.length - 1) {
        throw new BusError(
          BusErrorCode.InvalidSubject,
          "the '>' wildcard is only allowed as the last token",
          {
            details: { index: i },
          },
        );
      }
      return t;
    }
    return checkToken(t, i);
  });
  return `${SUBJECT_PREFIX}.${parts.join('.')}` as SubjectPattern;
}

/** True when `s` is a concrete subject that {@link subject} could have built. */
export function isSubject(s: string): s is Subject {
  if (!s.startsWith(`${SUBJECT_PREFIX}.`)) return false;
  const rest = s.slice(SUBJECT_PREFIX.length + 1).split('.');
  return rest.every((t) => t.length > 0 && t.length <= MAX_TOKEN_LENGTH && !FORBIDDEN.test(t));
}

/** True when `s` is a pattern that {@link subjectPattern} could have built. */
export function isSubjectPattern(s: string): s is SubjectPattern {
  if (!s.startsWith(`${SUBJECT_PREFIX}.`)) return false;
  const rest = s.slice(SUBJECT_PREFIX.length + 1).split('.');
  return rest.every(
    (t, i) =>
      t === Wildcard.One ||
      (t === Wildcard.Rest && i === rest.length - 1) ||
      (t.length > 0 && t.length <= MAX_TOKEN_LENGTH && !FORBIDDEN.test(t)),
  );
}
