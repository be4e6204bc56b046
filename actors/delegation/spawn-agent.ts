import type { ToolExecutor } from '../tools/types.ts';
import { ToolError } from '../tools/types.ts';

/** What a `spawn_agent` call asks for (arguments already validated by the tool's schema). */
export interface SpawnArgs {
  readonly profile: string;
  readonly task: string;
  readonly tools?: readonly string[];
  readonly roots?: readonly { readonly path: string; readonly access?: 'read' | 'read-write' }[];
  readonly mode?: 'allow' | 'ask' | 'deny';
}

/** The outcome of a sub-agent run, as the parent sees it. */
export interface SpawnResult {
  readonly childRunId: string;
  readonly status: 'completed' | 'failed' | 'denied';
  readonly reason: string;
  readonly summary: string | null;
  /** Everything the request asked for that the parent could not give (see policy/delegation). */
  readonly narrowed: readonly { readonly kind: string; readonly item: string; readonly reason: string }[];
  readonly usage: { readonly modelCalls: number; readonly toolCalls: number };
}

/**
 * Starts (or finds again, after a restart) the child run of one `spawn_agent` call and waits for
 * it. The child's run id derives from the parent's run and call, so a retried call finds the
 * same child instead of starting a second one.
 */
export interface SubAgentSpawner {
  spawn(parentRunId: string, callId: string, args: SpawnArgs): Promise<SpawnResult>;
}

/** The `spawn_agent` executor: the parent gets the child's result (and its usage) as an observation. */
export function createSpawnAgentExecutor(spawner: SubAgentSpawner): ToolExecutor {
  return {
    async execute(args, ctx) {
      const profile = args.profile;
      const task = args.task;
      if (typeof profile !== 'string' || typeof task !== 'string') {
        throw new ToolError('invalid_arguments', 'spawn_agent needs a profile and a task');
      }
      const result = await spawner.spawn(ctx.runId, ctx.callId, args as unknown as SpawnArgs);
      ctx.reportUsage?.(result.usage);
      return result;
    },
  };
}
