import { z } from 'zod';
import { AgentsSection } from './schema/agents.ts';
import { ApprovalsSection } from './schema/approvals.ts';
import { BusSection } from './schema/bus.ts';
import { Comment, PathText } from './schema/common.ts';
import { HttpSection } from './schema/http.ts';
import { McpSection } from './schema/mcp.ts';
import { NodeSection } from './schema/node.ts';
import { SecretsSection } from './schema/secrets.ts';
import { SensitivePathsSection } from './schema/sensitive-paths.ts';
import { SidecarSection } from './schema/sidecar.ts';
import { SurfacesSection } from './schema/surfaces.ts';
import { TelemetrySection } from './schema/telemetry.ts';
import { ToolsSection } from './schema/tools.ts';
import { WorkspaceSection } from './schema/workspace.ts';

export { hasControlChars, PathText, SecretRef } from './schema/common.ts';
export { ToolEntry } from './schema/tools.ts';
export type { AgentConfig } from './schema/agents.ts';
export { DEFAULT_CONTEXT_TOKENS } from './schema/model.ts';
export type { GoalLoopConfig } from './schema/goal-loops.ts';
export type { PlatformConfig } from './schema/platforms.ts';
export type { TelemetryConfig } from './schema/telemetry.ts';

/**
 * The shape of `snotra.config.json` (DESIGN.md §12). Strict: an unknown key is an error, so a
 * misspelt restriction is never silently ignored.
 */
export const ConfigSchema = z.strictObject({
  $schema: z
    .string()
    .optional()
    .describe(
      'The JSON Schema of this file, for editor help, e.g. "./node_modules/snotra-runtime/schema/snotra.config.schema.json".',
    ),
  $comment: Comment,
  /** Default: outside the workspace, `$XDG_STATE_HOME/snotra/<name>-<hash>` (see `defaultStateDir`). */
  stateDir: PathText.optional().describe(
    'Where the runtime keeps its database, logs and socket. Default: outside the workspace, $XDG_STATE_HOME/snotra/<folder>-<hash> (~/.local/state/snotra/...), so a command that wipes the workspace cannot reach it.',
  ),
  workspace: WorkspaceSection,
  agents: AgentsSection,
  tools: ToolsSection,
  mcp: McpSection,
  surfaces: SurfacesSection,
  sidecar: SidecarSection,
  bus: BusSection,
  node: NodeSection,
  secrets: SecretsSection,
  http: HttpSection,
  approvals: ApprovalsSection,
  sensitivePaths: SensitivePathsSection,
  telemetry: TelemetrySection,
});
/** A loaded config: paths absolute, the state dir resolved (configured or default). */
export type Config = Omit<z.infer<typeof ConfigSchema>, 'stateDir'> & { stateDir: string };
