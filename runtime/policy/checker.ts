import type { Decision } from '../../policy/decision.ts';
import type { PolicyContext, ToolCall } from '../../policy/context.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { LoadedConfig } from '../config/load.ts';
import { agentPolicyContext } from './agent-context.ts';
import { createPolicyEnvironment, type PolicyEnvironmentOptions } from './environment.ts';
import { registryFromConfig } from './registry-from-config.ts';

/** Evaluates calls for the agents of one config, without executing anything. */
export interface PolicyChecker {
  /** The agent used when none is named: `assistant` if defined, else the first one. */
  readonly defaultAgent: string;
  hasAgent(agent: string): boolean;
  check(agent: string, call: ToolCall): Decision;
}

/** A checker over a loaded config, with the real path guard and shell analyzer. */
export async function createPolicyChecker(
  loaded: LoadedConfig,
  options: PolicyEnvironmentOptions = {},
): Promise<PolicyChecker> {
  const registry = registryFromConfig(loaded);
  const env = await createPolicyEnvironment(loaded, options);
  const agents = Object.keys(loaded.config.agents);
  const contexts = new Map<string, PolicyContext>();
  const contextOf = (agent: string): PolicyContext => {
    let ctx = contexts.get(agent);
    if (ctx === undefined) {
      ctx = agentPolicyContext(loaded, agent, {
        registry,
        paths: env.paths,
        shell: env.shell,
        sandboxed: env.sandbox.name !== 'none',
      });
      contexts.set(agent, ctx);
    }
    return ctx;
  };
  return {
    defaultAgent: agents.includes('assistant') ? 'assistant' : (agents[0] ?? 'assistant'),
    hasAgent: (agent) => Object.hasOwn(loaded.config.agents, agent),
    check: (agent, call) => evaluate(call, contextOf(agent)),
  };
}
