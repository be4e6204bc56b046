import { fitTranscript } from '../../actors/model/context-window.ts';
import type { ModelStepRequest, ModelTool } from '../../actors/model/provider.ts';
import { systemPrompt } from '../../actors/model/system-prompt.ts';
import type { RunContext } from '../../machines/run/types.ts';
import type { PolicyContext } from '../../policy/context.ts';
import { DEFAULT_CONTEXT_TOKENS } from '../config/schema.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { Sessions } from './sessions.ts';

/** What a step's preparation reads. */
export interface ConversationDeps {
  readonly loaded: LoadedConfig;
  readonly sessions: Sessions;
  /** A run's context (live or stored), to walk a sub-agent's parents. */
  readonly contextOf: (runId: string) => RunContext | null;
}

/**
 * What a model step sends besides its run's own transcript: the session's history before it
 * (a run of a durable conversation), the system prompt (the runtime's preamble and the agent's
 * `instructions`), the agents whose model a sub-agent inherits, and all of it fitted to the
 * context window of the model that answers (actors/model/context-window.ts).
 */
export function createStepPreparer(deps: ConversationDeps) {
  const agents = deps.loaded.config.agents;
  const agentOf = (id: string) => (Object.hasOwn(agents, id) ? agents[id] : undefined);

  /** The agents of a run's parents, nearest first. */
  const ancestors = (ctx: RunContext): string[] => {
    const out: string[] = [];
    const seen = new Set<string>([ctx.runId]);
    let parent = ctx.parentRunId;
    while (parent !== null && !seen.has(parent)) {
      seen.add(parent);
      const p = deps.contextOf(parent);
      if (p === null) break;
      out.push(p.agentId);
      parent = p.parentRunId;
    }
    return out;
  };

  return (
    ctx: RunContext,
    policy: PolicyContext,
    tools: readonly ModelTool[],
  ): Pick<ModelStepRequest, 'transcript' | 'system' | 'inheritFrom'> => {
    const inheritFrom = ctx.parentRunId === null ? [] : ancestors(ctx);
    const owner = [ctx.agentId, ...inheritFrom].find((a) => agentOf(a)?.model !== undefined);
    const model = owner === undefined ? undefined : agentOf(owner)?.model;
    const system = systemPrompt(
      {
        agentId: ctx.agentId,
        mode: policy.mode,
        roots: policy.roots,
        tools: tools.map((t) => t.name),
      },
      agentOf(ctx.agentId)?.instructions,
    );
    const history =
      ctx.historyUpTo !== undefined && ctx.historyUpTo > 0 && ctx.parentRunId === null
        ? deps.sessions.history(ctx.sessionId, ctx.historyUpTo)
        : [];
    const transcript = history.length === 0 ? ctx.transcript : [...history, ...ctx.transcript];
    const window =
      model === undefined ? null : (model.contextTokens ?? DEFAULT_CONTEXT_TOKENS[model.provider]);
    return {
      transcript: window === null ? transcript : fitTranscript(transcript, window, system).transcript,
      system,
      ...(inheritFrom.length > 0 ? { inheritFrom } : {}),
    };
  };
}
