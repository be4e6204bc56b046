import type { Bus } from './bus/index.ts';
import type { McpHost } from '../actors/mcp/index.ts';
import type { RuntimeParts } from './boot/assemble.ts';
import type { RuntimeKinds } from './messages.ts';

/**
 * A runtime's parts, for the runtime's own modules that drive one from outside its front (the
 * demo) and for tests (runtime/testing.ts). Not exported to surfaces or embedders: they use the
 * Runtime's methods and its read models.
 */
export interface RuntimeInternals extends RuntimeParts {
  /** The MCP client host, or null when no server is configured. */
  readonly mcp: McpHost | null;
  /** An agent actor's own bus connection under per-actor auth; null in token mode or before it connected. */
  actorBus(agentId: string): Promise<Bus<RuntimeKinds> | null>;
}

const registry = new WeakMap<object, RuntimeInternals>();

/** Records a runtime's parts (called once, by `Runtime.start`). */
export function registerInternals(runtime: object, parts: RuntimeParts): void {
  registry.set(runtime, {
    ...parts,
    mcp: parts.tools?.mcp ?? null,
    actorBus: (agentId) => parts.agents.actorBus(agentId),
  });
}

/** The parts of a runtime started with `Runtime.start`. */
export function internalsOf(runtime: object): RuntimeInternals {
  const parts = registry.get(runtime);
  if (parts === undefined) throw new Error('not a runtime started with Runtime.start');
  return parts;
}
