import type { ModelUsage } from './types.ts';

/** `sum` with one model call's usage added; `sum` itself when the call reported none. */
export function addUsage(sum: ModelUsage | undefined, add: ModelUsage | undefined): ModelUsage | undefined {
  if (add === undefined) return sum;
  const cost =
    sum?.costUsd === undefined && add.costUsd === undefined
      ? {}
      : { costUsd: (sum?.costUsd ?? 0) + (add.costUsd ?? 0) };
  return {
    inputTokens: (sum?.inputTokens ?? 0) + add.inputTokens,
    outputTokens: (sum?.outputTokens ?? 0) + add.outputTokens,
    ...cost,
  };
}
