import type { ModelUsage } from './types.ts';

/** `sum` with one model call's usage added; `sum` itself when the call reported none. */
export function addUsage(sum: ModelUsage | undefined, add: ModelUsage | undefined): ModelUsage | undefined {
  if (add === undefined) return sum;
  return {
    inputTokens: (sum?.inputTokens ?? 0) + add.inputTokens,
    outputTokens: (sum?.outputTokens ?? 0) + add.outputTokens,
  };
}
