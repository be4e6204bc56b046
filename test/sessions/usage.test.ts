import { describe, expect, it } from 'vitest';
import type { RunContext } from '../../machines/run/types.ts';
import { sessionUsage } from '../../runtime/sessions/usage.ts';

const ctx = (tokens?: RunContext['tokens']) => ({ ...(tokens ? { tokens } : {}) }) as RunContext;

describe('usage per session', () => {
  it('sums the tokens and cost of its runs; a run without usage or unknown adds nothing', () => {
    const runs: Record<string, RunContext> = {
      a: ctx({ inputTokens: 100, outputTokens: 20, costUsd: 0.25 }),
      b: ctx(),
      c: ctx({ inputTokens: 5, outputTokens: 1 }),
    };
    const of = (id: string) => runs[id] ?? null;
    expect(sessionUsage(['a', 'b', 'c', 'gone'], of)).toEqual({
      inputTokens: 105,
      outputTokens: 21,
      costUsd: 0.25,
    });
    expect(sessionUsage(['b', 'gone'], of)).toBeNull();
    expect(sessionUsage([], of)).toBeNull();
  });

  it("adds its compactions' usage (outside any run): alone it is the session's usage", () => {
    const of = (id: string) =>
      id === 'a' ? ctx({ inputTokens: 100, outputTokens: 20, costUsd: 0.25 }) : null;
    const compactions = { inputTokens: 50, outputTokens: 5, costUsd: 0.125 };
    expect(sessionUsage(['a'], of, compactions)).toEqual({
      inputTokens: 150,
      outputTokens: 25,
      costUsd: 0.375,
    });
    expect(sessionUsage(['gone'], of, { inputTokens: 7, outputTokens: 1 })).toEqual({
      inputTokens: 7,
      outputTokens: 1,
    });
    expect(sessionUsage([], of, null)).toBeNull();
  });
});
