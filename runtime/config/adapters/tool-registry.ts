import { isBuiltinTool } from '../../../policy/builtins.ts';
import { GOAL_TOOLS } from '../../../policy/goal-tools.ts';
import { declaredMcpTools, isMcpToolName, mcpToolFiltered, McpOverride } from '../../../policy/mcp.ts';
import { ToolRegistry } from '../../../policy/registry.ts';
import { ConfigError, formatIssues } from '../errors.ts';
import type { LoadedConfig } from '../loaded-config.ts';

/**
 * The tool registry of a config: the built-ins, extension and skill tools declared under
 * `tools.<name>` (an entry with nothing but `source` is unannotated; one that fails the metadata
 * schema is invalid — both need a human for every call), and MCP tools declared by servers, with
 * the user's overrides under `tools["mcp:<server>:<tool>"]`.
 */
export function registryFromConfig(loaded: LoadedConfig): ToolRegistry {
  const { config } = loaded;
  const registry = ToolRegistry.withBuiltins();
  // The goal tools: registered for every agent, offered to goal runs only (see policy/goal-tools.ts).
  for (const [name, tool] of Object.entries(GOAL_TOOLS))
    registry.register(name, 'builtin', tool.metadata, tool.args);
  const problems: string[] = [];
  const overrides = new Map<string, McpOverride>();
  for (const [name, entry] of Object.entries(config.tools)) {
    if (isBuiltinTool(name) || Object.hasOwn(GOAL_TOOLS, name)) {
      problems.push(
        `tools.${name}: built-in tool metadata cannot be changed in config; use agents.<id>.rules to restrict it`,
      );
      continue;
    }
    if (isMcpToolName(name)) {
      const parsed = McpOverride.safeParse(entry, { reportInput: true });
      if (!parsed.success) {
        problems.push(...formatIssues(parsed.error.issues).map((p) => `tools["${name}"].${p}`));
        continue;
      }
      overrides.set(name, parsed.data);
      const [, server = '', tool = ''] = name.split(':');
      registry.registerMcp(server, name.slice(`mcp:${server}:`.length) || tool, parsed.data);
      continue;
    }
    const source = entry.source === 'skill' ? 'skill' : 'extension';
    const keys = Object.keys(entry).filter((k) => k !== 'source');
    registry.register(name, source, keys.length === 0 ? undefined : { source, ...entry });
  }
  for (const [server, def] of Object.entries(config.mcp.servers)) {
    for (const [tool, info] of declaredMcpTools(def.tools)) {
      if (mcpToolFiltered(def.tools, tool) !== null) continue;
      registry.registerMcp(server, tool, overrides.get(`mcp:${server}:${tool}`), info.annotations);
    }
  }
  if (problems.length > 0) throw new ConfigError(loaded.file ?? '(config)', problems);
  return registry;
}
