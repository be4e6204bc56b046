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

/** Why an MCP tool's effective metadata is what it is, in words safe to show (CLI, audit). */
export interface McpMetadataExplained {
  readonly metadata: ToolSecurityMetadata;
  readonly why: readonly string[];
}

/**
 * Whether the server's hints say the tool may destroy something. Absent hints are the worst case
 * (MCP: `destructiveHint` defaults to true); a tool that declares itself read-only makes no
 * destructive claim (MCP: `destructiveHint` is meaningful only when `readOnlyHint` is false).
 * `annotations === undefined` means nothing was reported at all (a tool declared in config):
 * no hint to tighten with.
 */
export function mcpMayDestroy(annotations: McpAnnotations | undefined): boolean {
  if (annotations === undefined) return false;
  if (annotations.destructiveHint === true) return true;
  if (annotations.destructiveHint === false) return false;
  return annotations.readOnlyHint !== true;
}

/**
 * The effective metadata of an MCP tool, with the reasons. Without a local override it is
 * `external` + `ask`. Server annotations are untrusted: they can only tighten, never loosen —
 * a destructive hint (`destructiveHint: true`, or absent on a tool not declared read-only) keeps
 * `ask` even over a user override that narrowed the risk or set `approvalDefault: "allow"`;
 * `readOnlyHint` and `idempotentHint` never lower the risk or mark a tool idempotent (only the
 * user's override can).
 */
export function explainMcpMetadata(
  override: McpOverride | undefined,
  annotations: McpAnnotations | undefined,
): McpMetadataExplained {
  const why: string[] = [];
  const risk = override?.risk ?? 'external';
  // A user who narrowed the risk vetted the tool: the mode decides unless they also set a default.
  let approvalDefault: ApprovalDefault = override?.approvalDefault ?? (override?.risk ? 'allow' : 'ask');
  if (override === undefined) why.push('no local override: MCP tools are external + ask');
  else why.push('local override in tools["mcp:<server>:<tool>"]');
  if (mcpMayDestroy(annotations) && APPROVAL_STRICTNESS[approvalDefault] < APPROVAL_STRICTNESS.ask) {
    approvalDefault = 'ask';
    why.push(
      annotations?.destructiveHint === true
        ? 'the server marks it destructive (destructiveHint): every call asks'
        : 'the server does not say it is non-destructive (absent destructiveHint is the worst case): every call asks',
    );
  }
  if (annotations?.readOnlyHint === true && override?.risk === undefined) {
    why.push('readOnlyHint is ignored: a server cannot lower the risk');
  }
  const metadata: ToolSecurityMetadata = { risk, approvalDefault, source: 'mcp' };
  if (override?.targetArgument) metadata.targetArgument = override.targetArgument;
  if (override?.pathArguments) metadata.pathArguments = override.pathArguments;
  if (override?.idempotent !== undefined) metadata.idempotent = override.idempotent;
  return { metadata, why };
}

/** The effective metadata of an MCP tool (see `explainMcpMetadata`). */
export function mcpMetadata(
  override: McpOverride | undefined,
  annotations: McpAnnotations | undefined,
): ToolSecurityMetadata {
  return explainMcpMetadata(override, annotations).metadata;
}

/** A server's tool filter: exact names, or prefixes ending in `*`; `exclude` wins. */
export interface McpToolFilter {
  readonly include?: readonly string[] | undefined;
  readonly exclude?: readonly string[] | undefined;
}

function matchesPattern(pattern: string, tool: string): boolean {
  return pattern.endsWith('*') ? tool.startsWith(pattern.slice(0, -1)) : pattern === tool;
}

/** Whether `tool` passes `filter`, and if not, why (for listings). */
export function mcpToolFiltered(filter: McpToolFilter, tool: string): string | null {
  const excluded = filter.exclude?.find((p) => matchesPattern(p, tool));
  if (excluded !== undefined)
    return `excluded by mcp.servers.<id>.tools.exclude (${JSON.stringify(excluded)})`;
  if (filter.include !== undefined && !filter.include.some((p) => matchesPattern(p, tool))) {
    return 'not in mcp.servers.<id>.tools.include';
  }
  return null;
}

/** The tools a server's config declares (the `tools` entries besides `include`/`exclude`). */
export function declaredMcpTools(
  tools: Readonly<Record<string, unknown>>,
): [string, { readonly annotations?: McpAnnotations | undefined }][] {
  const out: [string, { readonly annotations?: McpAnnotations | undefined }][] = [];
  for (const [name, entry] of Object.entries(tools)) {
    if (name === 'include' || name === 'exclude' || typeof entry !== 'object' || entry === null) continue;
    out.push([name, entry as { readonly annotations?: McpAnnotations }]);
  }
  return out;
}
