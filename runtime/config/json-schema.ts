import { z } from 'zod';
import { ConfigSchema } from './schema.ts';

/** The JSON Schema of `snotra.config.json`, generated from the zod schema (shipped in `schema/`). */
export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }),
    $id: 'https://snotra.dev/schema/snotra.config.schema.json',
    title: 'Snotra Runtime configuration',
  };
}
