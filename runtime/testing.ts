/**
 * Test-only: the one way a test reaches a runtime's internals (its store, bus, queue, runs,
 * approvals, registry, policy environment, cluster node, MCP host). Product code never imports
 * this module; surfaces read through `runtime.read`, embedders through the Runtime's methods.
 */
import { internalsOf, type RuntimeInternals } from './internals.ts';
import type { Runtime } from './runtime.ts';

export type { RuntimeInternals };

/** The internals of a started runtime (test-only). */
export function runtimeInternals(runtime: Runtime): RuntimeInternals {
  return internalsOf(runtime);
}
