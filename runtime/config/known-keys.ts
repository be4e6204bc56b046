import type { z } from 'zod';

interface Def {
  readonly type: string;
  readonly shape?: Record<string, { _zod: { def: Def } }>;
  readonly innerType?: { _zod: { def: Def } };
  readonly valueType?: { _zod: { def: Def } };
  readonly element?: { _zod: { def: Def } };
  readonly in?: { _zod: { def: Def } };
}

/** Unwraps defaults, optionals, nullables and pipes down to the schema that holds the data. */
function unwrap(def: Def): Def {
  let d = def;
  for (let i = 0; i < 16; i++) {
    const inner = d.innerType ?? (d.type === 'pipe' ? d.in : undefined);
    if (inner === undefined) return d;
    d = inner._zod.def;
  }
  return d;
}

/**
 * The keys an object schema accepts at a JSON path of `schema` (records and arrays are followed
 * by any key or index), or an empty list when the path leads to no object schema.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let def = unwrap((schema as unknown as { _zod: { def: Def } })._zod.def);
  for (const seg of path) {
    if (
      def.type === 'object' &&
      def.shape !== undefined &&
      typeof seg === 'string' &&
      Object.hasOwn(def.shape, seg)
    )
      def = unwrap((def.shape[seg] as { _zod: { def: Def } })._zod.def);
    else if (def.type === 'record' && def.valueType !== undefined) def = unwrap(def.valueType._zod.def);
    else if (def.type === 'array' && def.element !== undefined) def = unwrap(def.element._zod.def);
    else return [];
  }
  return def.type === 'object' && def.shape !== undefined ? Object.keys(def.shape) : [];
}
