import type { Decision } from '../../policy/decision.ts';
import type { PolicyContext, ToolCall } from '../../policy/context.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { CommandAnalyzer } from '../../policy/seams.ts';
import type { LoadedConfig } from '../config/load.ts';
import { detectSandbox, type SandboxStatus } from '../sandbox/detect.ts';
import { agentPolicyContext } from './agent-context.ts';
import type { PolicyEnvironmentOptions } from './environment.ts';
import { createPolicyPaths } from '../config/adapters/policy-paths.ts';
import { LazyShell, ShellNotLoaded } from './lazy-shell.ts';
import { registryFromConfig } from '../config/adapters/tool-registry.ts';

/** Evaluates calls for the agents of one config, without executing anything. */
export interface PolicyChecker {
  /** The agent used when none is named: `assistant` if defined, else the first one. */
  readonly defaultAgent: string;
  hasAgent(agent: string): boolean;
  /**
   * The decision for `call`, loading the shell parser first when the call needs it (a `shell`
   * call, or any call whose evaluation asks the analyzer). The same decision as `check` on a
   * checker whose parser was loaded up front.
   */
  decide(agent: string, call: ToolCall): Promise<Decision>;
  /**
   * The decision for `call`, synchronously. On a checker made with `lazyShell`, a call that needs
   * the shell parser before it is loaded throws `ShellNotLoaded` (use `decide`).
   */
  check(agent: string, call: ToolCall): Decision;
}

/** Options of `createPolicyChecker`. */
export interface PolicyCheckerOptions extends PolicyEnvironmentOptions {
  /**
   * Load the shell parser on the first call that needs it (`decide`), not up front. Default
   * false: `check` then works for every call. Either way the OS sandbox is looked up only when a
   * decision depends on it (a `shell` call in `allow` mode), once per checker.
   */
  readonly lazyShell?: boolean;
  /** The analyzer loader (tests); defaults to the real parser. */
  readonly loadShell?: () => Promise<Required<CommandAnalyzer>>;
}

/** A checker over a loaded config, with the real path guard and shell analyzer. */
export async function createPolicyChecker(
  loaded: LoadedConfig,
  options: PolicyCheckerOptions = {},
): Promise<PolicyChecker> {
  const registry = registryFromConfig(loaded);
  const paths = createPolicyPaths(loaded);
  const shell = new LazyShell(options.loadShell);
  if (options.lazyShell !== true) await shell.load();
  let sandbox: SandboxStatus | null = null;
  const detect = options.detectSandbox ?? detectSandbox;
  // Looked up once, when a decision first reads it. The probe runs bwrap (a child process);
  // detectSandbox also keeps its result for the process. A status of "works" only changes
  // which question is asked: the shell executor still runs every command inside bwrap and
  // fails closed when bwrap cannot start (actors/tools/shell.ts).
  const sandboxed = (): boolean => {
    sandbox ??= detect();
    return sandbox.name !== 'none';
  };
  const agents = Object.keys(loaded.config.agents);
  const contexts = new Map<string, PolicyContext>();
  const contextOf = (agent: string): PolicyContext => {
    let ctx = contexts.get(agent);
    if (ctx === undefined) {
      ctx = agentPolicyContext(loaded, agent, { registry, paths, shell, sandboxed });
      contexts.set(agent, ctx);
    }
    return ctx;
  };
  const check = (agent: string, call: ToolCall): Decision => evaluate(call, contextOf(agent));
  return {
    defaultAgent: agents.includes('assistant') ? 'assistant' : (agents[0] ?? 'assistant'),
    hasAgent: (agent) => Object.hasOwn(loaded.config.agents, agent),
    check,
    async decide(agent, call) {
      const ctx = contextOf(agent);
      if (!shell.loaded && call.tool === 'shell') await shell.load();
      if (shell.loaded) return evaluate(call, ctx);
      let decision: Decision | null = null;
      try {
        decision = evaluate(call, ctx);
      } catch (error) {
        if (!(error instanceof ShellNotLoaded)) throw error;
      }
      // Asked (even if the throw was caught inside): evaluate again with the parser loaded.
      if (decision === null || shell.asked) {
        await shell.load();
        decision = evaluate(call, ctx);
      }
      return decision;
    },
  };
}
