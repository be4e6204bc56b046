import { z } from 'zod';
import { ApprovalDefault, APPROVAL_STRICTNESS, type ToolSecurityMetadata } from './metadata.ts';
import { ToolRisk } from './risk.ts';

/** Tool annotations as an MCP server reports them (untrusted hints). */
export const McpAnnotations = z
  .object({
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .loose();
export type McpAnnotations = z.infer<typeof McpAnnotations>;

/**
 * The user's local override for one MCP tool, recorded in config. It is the only thing that can
 * narrow an MCP tool's risk (for example declare a lookup tool `read`).
 */
export const McpOverride = z.strictObject({
  risk: ToolRisk.optional(),
  approvalDefault: ApprovalDefault.optional(),
  targetArgument: z.string().min(1).optional(),
  pathArguments: z.array(z.string().min(1)).optional(),
  idempotent: z.boolean().optional(),
});
export type McpOverride = z.infer<typeof McpOverride>;

/** `mcp:<server>:<tool>` — the registry name of an MCP tool. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp:${server}:${tool}`;
}

/** Whether a tool name is in the MCP namespace. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp:');
}

/**
 * The effective metadata of an MCP tool. Without a local override it is `external` + `ask`.
 * Server annotations are untrusted: they can only tighten (`destructiveHint` forces at least
 * `ask`), never loosen (`readOnlyHint` and `idempotentHint` are ignored).
 */
export function mcpMetadata(
  override: McpOverride | undefined,
  annotations: McpAnnotations | undefined,
): ToolSecurityMetadata {
  const risk = override?.risk ?? 'external';
  // A user who narrowed the risk vetted the tool: the mode decides unless they also set a default.
  let approvalDefault: ApprovalDefault = override?.approvalDefault ?? (override?.risk ? 'allow' : 'ask');
  if (
    annotations?.destructiveHint === true &&
    APPROVAL_STRICTNESS[approvalDefault] < APPROVAL_STRICTNESS.ask
  ) {
    approvalDefault = 'ask';
  }
  const metadata: ToolSecurityMetadata = { risk, approvalDefault, source: 'mcp' };
  if (override?.targetArgument) metadata.targetArgument = override.targetArgument;
  if (override?.pathArguments) metadata.pathArguments = override.pathArguments;
  if (override?.idempotent !== undefined) metadata.idempotent = override.idempotent;
  return metadata;
}
