import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PolicyContext } from '../../policy/context.ts';
import type { Interaction, Mode } from '../../policy/risk.ts';
import type { ToolRule } from '../../policy/rules.ts';
import type { SessionApproval, StandingApproval } from '../../policy/approvals.ts';
import type { LoadedConfig } from '../../runtime/config/load.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { agentPolicyContext } from '../../runtime/policy/agent-context.ts';
import { createPolicyEnvironment, type PolicyEnvironment } from '../../runtime/policy/environment.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';

/** A real temporary workspace: `project/` (read-write, primary) and `docs/` (read-only). */
export interface Workspace {
  readonly dir: string;
  readonly project: string;
  readonly docs: string;
  readonly loaded: LoadedConfig;
  readonly env: PolicyEnvironment;
  context(opts?: ContextOptions): PolicyContext;
  cleanup(): void;
}

export interface ContextOptions {
  mode?: Mode;
  interaction?: Interaction;
  rules?: ToolRule[];
  tools?: string[];
  sessionId?: string | null;
  taskId?: string | null;
  sessionApprovals?: SessionApproval[];
  standingApprovals?: StandingApproval[];
}

/** Creates the workspace on disk and a policy environment over it (real path guard and shell analyzer). */
export async function createWorkspace(
  extraConfig: Record<string, unknown> = {},
  /** Runs on the new folders before the config is loaded (which checks that roots exist). */
  prepare?: (dir: string, project: string) => void,
): Promise<Workspace> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ws-')));
  const project = join(dir, 'project');
  const docs = join(dir, 'docs');
  mkdirSync(join(project, 'src'), { recursive: true });
  mkdirSync(docs, { recursive: true });
  prepare?.(dir, project);
  const config = {
    stateDir: join(dir, 'state'),
    workspace: {
      roots: [
        { id: 'project', path: 'project', access: 'read-write', primary: true },
        { id: 'docs', path: 'docs', access: 'read' },
      ],
    },
    agents: { assistant: { mode: 'ask' } },
    ...extraConfig,
  };
  const loaded = parseConfig(JSON.stringify(config), join(dir, 'snotra.config.json'), dir);
  const env = await createPolicyEnvironment(loaded);
  const registry = registryFromConfig(loaded);
  return {
    dir,
    project,
    docs,
    loaded,
    env,
    context(opts: ContextOptions = {}): PolicyContext {
      const base = agentPolicyContext(loaded, 'assistant', {
        registry,
        paths: env.paths,
        shell: env.shell,
        sandboxed: env.sandbox.name !== 'none',
        interaction: opts.interaction ?? 'attended',
        sessionId: opts.sessionId ?? null,
        taskId: opts.taskId ?? null,
        sessionApprovals: opts.sessionApprovals ?? [],
        standingApprovals: opts.standingApprovals ?? [],
      });
      return {
        ...base,
        mode: opts.mode ?? base.mode,
        rules: opts.rules ?? base.rules,
        tools: opts.tools ? new Set(opts.tools) : base.tools,
      };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
