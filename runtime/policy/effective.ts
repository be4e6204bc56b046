/**
 * The effective policy of a config, as `snotra policy show` prints it: per agent its mode, its
 * tools with their security metadata, its rules with where each came from; the roots, the
 * sensitive and never-writable paths, the hardline rules, and the active grants of the state dir.
 */
import { isBuiltinTool } from '../../policy/builtins.ts';
import { GOAL_TOOL_NAMES } from '../../policy/goal-tools.ts';
import { isMcpToolName } from '../../policy/mcp.ts';
import {
  NEVER_WRITABLE_PATHS,
  RUNTIME_RULE_IDS,
  SENSITIVE_PATHS,
  type SnotraPathGuard,
} from '../../policy/paths/index.ts';
import type { ToolRegistry } from '../../policy/registry.ts';
import type { Interaction, Mode, ToolRisk } from '../../policy/risk.ts';
import type { ToolRule } from '../../policy/rules.ts';
import { HARDLINE_RULES } from '../../policy/shell/index.ts';
import type { ActiveGrants } from '../control/grants.ts';
import type { LoadedConfig } from '../config/load.ts';
import { UnknownAgentError } from './agent-context.ts';

/** One tool an agent may call, with the metadata the policy decides by. */
export interface EffectiveTool {
  readonly name: string;
  /** `ok`, or why every call needs a human (`unannotated`, `invalid_metadata`), or `unknown`. */
  readonly status: 'ok' | 'unannotated' | 'invalid_metadata' | 'unknown';
  readonly risk: ToolRisk | null;
  readonly approvalDefault: 'allow' | 'ask' | 'deny' | null;
  readonly alwaysAsk: boolean;
  /** Where its metadata comes from: `built-in`, `tools.<name>`, `mcp.servers.<id>`. */
  readonly from: string;
}

/** A rule with the place it came from (`<file>: agents.<id>.rules[<i>]`). */
export type EffectiveRule = ToolRule & { readonly from: string };

/** The effective policy of one agent. */
export interface EffectiveAgent {
  readonly mode: Mode;
  readonly interaction: Interaction;
  /** True when the agent names no tool list and may call every registered tool. */
  readonly allTools: boolean;
  readonly tools: readonly EffectiveTool[];
  readonly rules: readonly EffectiveRule[];
}

/** A sensitive or never-writable path rule and where it came from. */
export interface EffectivePathRule {
  readonly id: string;
  readonly kind: 'sensitive' | 'never-writable';
  readonly patterns: readonly string[];
  readonly from: string;
}

/** The effective policy of a config. */
export interface EffectivePolicy {
  /** The config file, or null on embedded defaults. */
  readonly config: string | null;
  readonly stateDir: string;
  readonly agents: Readonly<Record<string, EffectiveAgent>>;
  readonly roots: readonly {
    readonly id: string;
    readonly path: string;
    readonly access: 'read' | 'read-write';
    readonly primary: boolean;
    readonly deny: readonly string[];
    readonly from: string;
  }[];
  readonly sensitivePaths: readonly EffectivePathRule[];
  readonly hardline: readonly { readonly id: string; readonly title: string }[];
  /** Active grants of the state dir; null when it has no database (no runtime ran there). */
  readonly grants: {
    readonly session: readonly {
      readonly id: string;
      readonly sessionId: string;
      readonly tool: string;
      readonly target: string | null;
      readonly grantedBy: string;
      readonly createdAt: string;
    }[];
    readonly standing: readonly {
      readonly id: string;
      readonly ownerTaskId: string;
      /** The agent of the scheduled task that owns it, when the config names one. */
      readonly agent: string | null;
      readonly tool: string;
      readonly target: string;
      readonly grantedBy: string;
      readonly createdAt: string;
    }[];
  } | null;
}

function toolFrom(name: string, loaded: LoadedConfig): string {
  if (isBuiltinTool(name)) return 'built-in';
  if (GOAL_TOOL_NAMES.has(name)) return 'built-in, goal runs only';
  if (isMcpToolName(name)) {
    const server = name.split(':')[1] ?? '';
    const override = Object.hasOwn(loaded.config.tools, name) ? ` with tools["${name}"]` : '';
    return `mcp.servers.${server}${override}`;
  }
  return `tools["${name}"]`;
}

function effectiveTool(name: string, registry: ToolRegistry, loaded: LoadedConfig): EffectiveTool {
  const t = registry.get(name);
  if (t === undefined) {
    return {
      name,
      status: 'unknown',
      risk: null,
      approvalDefault: null,
      alwaysAsk: false,
      from: 'not defined',
    };
  }
  if (t.status !== 'ok') {
    return {
      name,
      status: t.status,
      risk: null,
      approvalDefault: null,
      alwaysAsk: true,
      from: toolFrom(name, loaded),
    };
  }
  return {
    name,
    status: 'ok',
    risk: t.metadata.risk,
    approvalDefault: t.metadata.approvalDefault,
    alwaysAsk: t.metadata.alwaysAsk === true,
    from: toolFrom(name, loaded),
  };
}

function pathRules(loaded: LoadedConfig, guard: SnotraPathGuard, where: string): EffectivePathRule[] {
  const out: EffectivePathRule[] = [];
  for (const r of SENSITIVE_PATHS)
    out.push({ id: r.id, kind: 'sensitive', patterns: r.patterns, from: 'built-in' });
  out.push({
    id: RUNTIME_RULE_IDS.stateDir,
    kind: 'sensitive',
    patterns: [loaded.config.stateDir],
    from: 'runtime (state dir)',
  });
  out.push({
    id: RUNTIME_RULE_IDS.configFile,
    kind: 'sensitive',
    patterns: [loaded.file ?? '(embedded defaults)'],
    from: 'runtime (config file)',
  });
  for (const r of NEVER_WRITABLE_PATHS)
    out.push({ id: r.id, kind: 'never-writable', patterns: r.patterns, from: 'built-in' });
  loaded.config.sensitivePaths.forEach((e, i) => {
    out.push({ id: e.id, kind: e.kind, patterns: e.patterns, from: `${where}sensitivePaths[${i}]` });
  });
  // Whatever the guard enforces but the lists above do not name still shows (never hidden).
  const named = new Set(out.map((r) => r.id));
  for (const [kind, map] of [
    ['sensitive', guard.rules.sensitive],
    ['never-writable', guard.rules.neverWritable],
  ] as const) {
    for (const [id, globs] of map)
      if (!named.has(id)) out.push({ id, kind, patterns: globs, from: 'path guard' });
  }
  return out;
}

/**
 * The effective policy of `loaded` for `agent` (or every agent). Throws UnknownAgentError for an
 * agent the config does not define.
 */
export function effectivePolicy(
  loaded: LoadedConfig,
  registry: ToolRegistry,
  guard: SnotraPathGuard,
  grants: ActiveGrants | null,
  agent?: string,
): EffectivePolicy {
  const { config } = loaded;
  const where = loaded.file === null ? 'embedded defaults: ' : `${loaded.file}: `;
  const ids = Object.keys(config.agents);
  if (agent !== undefined && !ids.includes(agent)) throw new UnknownAgentError(agent, ids);
  const agents: Record<string, EffectiveAgent> = {};
  for (const id of agent === undefined ? ids : [agent]) {
    const def = config.agents[id];
    if (def === undefined) continue;
    const names = def.tools ?? registry.names();
    agents[id] = {
      mode: def.mode,
      interaction: def.interaction ?? 'attended',
      allTools: def.tools === undefined,
      tools: names.map((n) => effectiveTool(n, registry, loaded)),
      rules: def.rules.map((r, i) => ({ ...r, from: `${where}agents.${id}.rules[${i}]` })),
    };
  }
  const taskAgent = new Map(config.surfaces.scheduled.map((s) => [s.id, s.agent]));
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    config: loaded.file,
    stateDir: config.stateDir,
    agents,
    roots: config.workspace.roots.map((r, i) => ({
      id: r.id,
      path: r.path,
      access: r.access,
      primary: r.primary ?? false,
      deny: r.deny ?? [],
      from: `${where}workspace.roots[${i}]`,
    })),
    sensitivePaths: pathRules(loaded, guard, where),
    hardline: HARDLINE_RULES.map((r) => ({ id: r.id, title: r.title })),
    grants:
      grants === null
        ? null
        : {
            session: grants.session.map((g) => ({
              id: g.id,
              sessionId: g.sessionId,
              tool: g.tool,
              target: g.target,
              grantedBy: g.grantedBy,
              createdAt: iso(g.createdAt),
            })),
            standing: grants.standing
              .filter((g) => agent === undefined || taskAgent.get(g.ownerTaskId) === agent)
              .map((g) => ({
                id: g.id,
                ownerTaskId: g.ownerTaskId,
                agent: taskAgent.get(g.ownerTaskId) ?? null,
                tool: g.tool,
                target: g.target,
                grantedBy: g.grantedBy,
                createdAt: iso(g.createdAt),
              })),
          },
  };
}
