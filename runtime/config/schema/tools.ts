import { z } from 'zod';

/**
 * One entry under `tools`: security metadata of an extension or skill tool, or the user's local
 * override of an MCP tool (`mcp:<server>:<tool>`). Deliberately any object here: the tool
 * registry validates it (runtime/config/adapters/tool-registry.ts), and a tool whose metadata is
 * missing or invalid is registered as unannotated or invalid — every call needs a human — rather
 * than failing the whole config. The JSON Schema describes the expected shape (json-schema.ts).
 */
export const ToolEntry = z.record(z.string(), z.unknown());

/**
 * The `tools` section: security metadata of extension/skill tools, and the user's local overrides
 * for MCP tools.
 */
export const ToolsSection = z
  .record(z.string().min(1), ToolEntry)
  .default({})
  .describe(
    'Security metadata of extension and skill tools by name, and local overrides of MCP tools as "mcp:<server>:<tool>". A tool declared with only "source", or with metadata that does not validate, needs approval for every call.',
  );
