import type { ScriptStep } from './drivers/types.ts';

/** A step that proposes one call (after an optional expectation about the last observation). */
export function callStep(
  id: string,
  tool: string,
  args: Record<string, unknown>,
  expect?: Record<string, unknown>,
): ScriptStep {
  return { ...(expect ? { expect } : {}), respond: { kind: 'calls', calls: [{ id, tool, args }] } };
}

/** The final answer (after an optional expectation). */
export function finalStep(text: string, expect?: Record<string, unknown>): ScriptStep {
  return { ...(expect ? { expect } : {}), respond: { kind: 'final', text } };
}

export const denied = (reason?: string) => ({ kind: 'tool.denied', ...(reason ? { reason } : {}) });
export const result = (tool: string) => ({ kind: 'tool.result', tool });
