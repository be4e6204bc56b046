import { z } from 'zod';
import { BusError, BusErrorCode } from './errors.ts';

/** Payload schemas by kind name, e.g. `{ 'chat.message': z.object({ text: z.string() }) }`. */
export type KindSchemas = Record<string, z.ZodType>;

/** The built-in kind a responder sends when its handler failed; `request` turns it into `bus_request_failed`. */
export const BUS_ERROR_KIND = 'bus.error';

/** Payload of {@link BUS_ERROR_KIND}: a stable snake_case code and an optional short message. */
export const BusErrorPayload = z.strictObject({
  code: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
  message: z.string().max(500).optional(),
});

/** The built-in kinds every registry contains. */
export type BuiltinKinds = { [BUS_ERROR_KIND]: typeof BusErrorPayload };

/** Kind names: lower-case dotted words, e.g. `approval.decision`; at most 64 characters. */
const KIND_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const MAX_KIND_LENGTH = 64;

/**
 * A frozen registry of payload schemas by kind. Guarantees: every name is well formed, the `bus.`
 * prefix is reserved for built-ins, and `bus.error` is always present.
 */
export interface KindRegistry<K extends KindSchemas> {
  /** The schema of `kind`, or undefined when the kind is not registered. */
  get(kind: string): z.ZodType | undefined;
  /** True when `kind` is registered. */
  has(kind: string): boolean;
  /** All registered kind names (built-ins included). */
  readonly names: readonly string[];
  /** Type-only marker carrying the schema map; undefined at run time. */
  readonly _kinds?: K & BuiltinKinds;
}

/** Kind names registered in `R`. */
export type KindName<R> = R extends KindRegistry<infer K> ? keyof (K & BuiltinKinds) & string : never;
/** What `publish` accepts as the payload of kind `N` in registry `R`. */
export type PayloadIn<R, N extends string> =
  R extends KindRegistry<infer K> ? z.input<(K & BuiltinKinds)[N & keyof (K & BuiltinKinds)]> : never;
/** What a subscriber receives as the payload of kind `N` in registry `R` (after validation). */
export type PayloadOut<R, N extends string> =
  R extends KindRegistry<infer K> ? z.output<(K & BuiltinKinds)[N & keyof (K & BuiltinKinds)]> : never;

/**
 * Builds a {@link KindRegistry}. Throws `bus_invalid_kind` for a malformed name or one under the
 * reserved `bus.` prefix. Payload schemas must describe plain JSON data: the validated output is what
 * is sent, and receivers validate it again with the same schema.
 */
export function defineKinds<const K extends KindSchemas>(kinds: K): KindRegistry<K> {
  const map = new Map<string, z.ZodType>([[BUS_ERROR_KIND, BusErrorPayload]]);
  for (const [name, schema] of Object.entries(kinds)) {
    if (!KIND_NAME.test(name) || name.length > MAX_KIND_LENGTH) {
      throw new BusError(
        BusErrorCode.InvalidKind,
        `kind name ${JSON.stringify(name.slice(0, 80))} is malformed`,
      );
    }
    if (name === 'bus' || name.startsWith('bus.')) {
      throw new BusError(
        BusErrorCode.InvalidKind,
        `kind name ${JSON.stringify(name)} uses the reserved "bus." prefix`,
      );
    }
    map.set(name, schema);
  }
  const names = Object.freeze([...map.keys()]);
  return Object.freeze({
    get: (kind: string) => map.get(kind),
    has: (kind: string) => map.has(kind),
    names,
  });
}
