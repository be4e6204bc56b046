import { z } from 'zod';
import { POLICY_FIELD_DESCRIPTIONS, TOOL_ENTRY_DOCS } from './policy-descriptions.ts';
import { ConfigSchema, ToolEntry } from './schema.ts';

/** The published address of the schema (also in the package: `snotra-runtime/schema.json`). */
export const CONFIG_SCHEMA_ID = 'https://snotra.dev/schema/snotra.config.schema.json';

type JsonSchema = Record<string, unknown>;

/** Adds the description of a field defined in policy/ (see POLICY_FIELD_DESCRIPTIONS). */
function describePolicyField(schema: unknown, js: JsonSchema): void {
  const d = POLICY_FIELD_DESCRIPTIONS.get(schema as z.ZodType);
  if (d !== undefined) js.description = d;
}

function toJson(schema: z.ZodType): JsonSchema {
  const out: JsonSchema = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => describePolicyField(ctx.zodSchema, ctx.jsonSchema as JsonSchema),
  });
  delete out.$schema;
  return out;
}

/**
 * The JSON Schema of `snotra.config.json`, generated from the zod schema (shipped in `schema/`):
 * every field described, and `tools` entries typed — `mcp:<server>:<tool>` overrides by name
 * pattern, any other name as extension/skill tool metadata (the runtime itself accepts any object
 * there and treats bad metadata as an invalid tool: see `ToolEntry`).
 */
export function configJsonSchema(): Record<string, unknown> {
  const mcp = toJson(TOOL_ENTRY_DOCS.mcp);
  const tool = toJson(TOOL_ENTRY_DOCS.tool);
  const root = z.toJSONSchema(ConfigSchema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const js = ctx.jsonSchema as JsonSchema;
      describePolicyField(ctx.zodSchema, js);
      if (ctx.zodSchema === ToolEntry) {
        for (const k of Object.keys(js)) delete js[k];
        Object.assign(js, tool);
      }
    },
  }) as JsonSchema;
  const tools = (root.properties as Record<string, JsonSchema>).tools;
  if (tools !== undefined) tools.patternProperties = { [TOOL_ENTRY_DOCS.mcpPattern]: mcp };
  return { ...root, $id: CONFIG_SCHEMA_ID, title: 'Snotra Runtime configuration' };
}
