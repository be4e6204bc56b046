import { z } from 'zod';
import { BUILTIN_TOOLS } from './builtins.ts';
import { mcpMetadata, mcpToolName, type McpAnnotations, type McpOverride } from './mcp.ts';
import { ToolSecurityMetadata, type ToolSource } from './metadata.ts';
import type { ToolRisk } from './risk.ts';

/** A tool as the policy sees it after registration. */
export type ResolvedTool =
  | {
      readonly status: 'ok';
      readonly name: string;
      readonly metadata: ToolSecurityMetadata;
      /** Argument schema; tools without one accept any JSON object. */
      readonly args: z.ZodType<Record<string, unknown>>;
      /**
       * For a tool listed by a live MCP server: the digest of what the server declared (input
       * schema, annotations). Decisions carry it (`Decision.toolDigest`); a call whose tool
       * changed since its decision is refused at execution.
       */
      readonly digest?: string;
    }
  | { readonly status: 'unannotated'; readonly name: string; readonly source: ToolSource }
  | {
      readonly status: 'invalid_metadata';
      readonly name: string;
      readonly source: ToolSource;
      readonly problem: string;
    };

const anyObject: z.ZodType<Record<string, unknown>> = z.record(z.string(), z.unknown());

/**
 * Name-based risk inference, allowed only for vetted built-ins that arrive without metadata
 * (security model §5). Third-party tools never get a risk from their name.
 */
export function inferBuiltinRisk(name: string): ToolRisk | null {
  if (/^(read|list|search|get)_/.test(name)) return 'read';
  if (/^(write|edit)_/.test(name)) return 'write-local';
  return null;
}

/**
 * The tool registry: built-ins, extension and skill tools, MCP tools. Metadata is validated once
 * at registration; lookups are O(1). Unknown names resolve to `undefined` (→ `tool_not_found`).
 */
export class ToolRegistry {
  readonly #tools = new Map<string, ResolvedTool>();

  /** A registry holding the built-in tools of DESIGN.md §12. */
  static withBuiltins(): ToolRegistry {
    const registry = new ToolRegistry();
    for (const [name, tool] of Object.entries(BUILTIN_TOOLS)) {
      registry.#tools.set(name, { status: 'ok', name, metadata: tool.metadata, args: tool.args });
    }
    return registry;
  }

  /** The resolved tool, or undefined when no tool of that name exists. */
  get(name: string): ResolvedTool | undefined {
    return this.#tools.get(name);
  }

  /** Names of every registered tool. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /**
   * Registers an extension, skill or built-in tool with raw (untrusted) metadata. Missing
   * metadata makes it `unannotated`; metadata that fails the schema makes it `invalid_metadata`;
   * both need a human for every call. A built-in without metadata may fall back on inference.
   */
  register(
    name: string,
    source: Exclude<ToolSource, 'mcp'>,
    rawMetadata: unknown,
    args: z.ZodType<Record<string, unknown>> = anyObject,
  ): ResolvedTool {
    const resolved = this.#classify(name, source, rawMetadata, args);
    this.#tools.set(name, resolved);
    return resolved;
  }

  /**
   * Registers an MCP tool as `mcp:<server>:<tool>` with the user's override and the server's
   * hints. A tool listed by a live server comes with `live`: its argument schema (validated before
   * the policy sees a call) and the digest of its declaration.
   */
  registerMcp(
    server: string,
    tool: string,
    override?: McpOverride,
    annotations?: McpAnnotations,
    live?: { readonly args: z.ZodType<Record<string, unknown>>; readonly digest: string },
  ): ResolvedTool {
    const name = mcpToolName(server, tool);
    const resolved: ResolvedTool = {
      status: 'ok',
      name,
      metadata: mcpMetadata(override, annotations),
      args: live?.args ?? anyObject,
      ...(live ? { digest: live.digest } : {}),
    };
    this.#tools.set(name, resolved);
    return resolved;
  }

  /** Removes every tool of MCP server `server` (it crashed, stopped, or its catalog is replaced). */
  unregisterMcpServer(server: string): void {
    const prefix = mcpToolName(server, '');
    for (const name of [...this.#tools.keys()]) if (name.startsWith(prefix)) this.#tools.delete(name);
  }

  #classify(
    name: string,
    source: Exclude<ToolSource, 'mcp'>,
    raw: unknown,
    args: z.ZodType<Record<string, unknown>>,
  ): ResolvedTool {
    if (raw === undefined || raw === null) {
      const inferred = source === 'builtin' ? inferBuiltinRisk(name) : null;
      if (inferred) {
        return {
          status: 'ok',
          name,
          metadata: { risk: inferred, approvalDefault: inferred === 'read' ? 'allow' : 'ask', source },
          args,
        };
      }
      return { status: 'unannotated', name, source };
    }
    const parsed = ToolSecurityMetadata.safeParse(raw);
    if (!parsed.success) {
      return { status: 'invalid_metadata', name, source, problem: z.prettifyError(parsed.error) };
    }
    if (parsed.data.source !== source) {
      return {
        status: 'invalid_metadata',
        name,
        source,
        problem: `metadata declares source "${parsed.data.source}" but the tool was registered as "${source}"`,
      };
    }
    return { status: 'ok', name, metadata: parsed.data, args };
  }
}
