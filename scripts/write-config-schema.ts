// Regenerates schema/snotra.config.schema.json from the zod config schema (npm run schema).
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../runtime/config/json-schema.ts';

writeFileSync(
  new URL('../schema/snotra.config.schema.json', import.meta.url),
  `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
);
