/**
 * A shortcut past zod for the inputs of the hot path (audit events, `beginCall`). Validating
 * them with zod cost ~15 % of a tool call's store time. A fast parser accepts only inputs it
 * is sure of — a plain object with known keys whose values pass simple checks — and returns
 * what zod would; for anything else it returns `undefined` and the caller asks zod, whose
 * messages name every problem. A property test keeps "fast accepts ⇒ zod accepts, same output".
 */

/** A check of one field's value; `undefined` values are handled by `optional`. */
export type FieldCheck = (value: unknown) => boolean;

/** One field of a fast shape. */
export interface FastField {
  readonly check: FieldCheck;
  /** May be absent or undefined. */
  readonly optional: boolean;
}

/** A string of `min`..`max` UTF-16 code units (zod's `.min`/`.max` on strings). */
export function str(min: number, max: number): FieldCheck {
  return (value) => typeof value === 'string' && value.length >= min && value.length <= max;
}

/** One of the given strings. */
export function oneOf(values: readonly string[]): FieldCheck {
  const set = new Set(values);
  return (value) => typeof value === 'string' && set.has(value);
}

/** An integer in [min, max] (zod's `z.int().min().max()`). */
export function int(min: number, max: number): FieldCheck {
  return (value) => typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** The check, or null. */
export function nullable(check: FieldCheck): FieldCheck {
  return (value) => value === null || check(value);
}

/** Any value at all (zod's `z.unknown()`). */
export const anything: FieldCheck = () => true;

/** A required field. */
export function required(check: FieldCheck): FastField {
  return { check, optional: false };
}

/** A field that may be absent or undefined. */
export function optional(check: FieldCheck): FastField {
  return { check, optional: true };
}

/**
 * The fast parser of a strict object shape: a shallow copy holding the present keys, or
 * `undefined` when the input is not certainly valid.
 */
export function fastStrictObject<T>(
  shape: Readonly<Record<string, FastField>>,
): (input: unknown) => T | undefined {
  const fields = Object.entries(shape);
  const known = new Set(Object.keys(shape));
  return (input) => {
    if (typeof input !== 'object' || input === null) return undefined;
    const proto = Object.getPrototypeOf(input) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const record = input as Record<string, unknown>;
    for (const key in record) if (!known.has(key)) return undefined;
    const out: Record<string, unknown> = {};
    for (const [key, field] of fields) {
      if (!Object.hasOwn(record, key)) {
        if (!field.optional) return undefined;
        continue;
      }
      const value = record[key];
      if (value === undefined ? !field.optional : !field.check(value)) return undefined;
      out[key] = value;
    }
    return out as T;
  };
}
