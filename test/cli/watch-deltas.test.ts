import { describe, expect, it } from 'vitest';
import type { RunFeedEvent } from '../../runtime/index.ts';
import { RunWatch } from '../../surfaces/cli/run/watch.ts';

const header = { runId: 'assistant:r1', ts: 0, agentId: 'assistant', parentRunId: null };

function watch(): { w: RunWatch; out: string[] } {
  const out: string[] = [];
  const w = new RunWatch(
    { stdout: (t) => out.push(t), stderr: () => {}, stdinLines: async function* () {} },
    false,
    () => {},
  );
  w.follow(header.runId);
  return { w, out };
}

describe('the terminal view of a streamed answer', () => {
  it('prints each delta as it comes and not the whole turn again', () => {
    const { w, out } = watch();
    w.onEvent({ ...header, type: 'model.delta', delta: 'Hel' } as RunFeedEvent);
    expect(out.join('')).toBe('Hel');
    w.onEvent({ ...header, type: 'model.delta', delta: 'lo.' } as RunFeedEvent);
    w.onEvent({ ...header, type: 'model.text', delta: 'Hello.' } as RunFeedEvent);
    w.onEvent({ ...header, type: 'model.usage', step: 0, inputTokens: 3, outputTokens: 2 } as RunFeedEvent);
    expect(out.join('')).toBe('Hello.');
  });

  it('a step that did not stream still prints its whole text; escape sequences in deltas are neutralized', () => {
    const { w, out } = watch();
    w.onEvent({ ...header, type: 'model.text', delta: 'Whole.' } as RunFeedEvent);
    w.onEvent({ ...header, type: 'model.delta', delta: 'a\u001b' } as RunFeedEvent);
    w.onEvent({ ...header, type: 'model.delta', delta: '[31mb' } as RunFeedEvent);
    w.onEvent({ ...header, type: 'model.text', delta: 'a\u001b[31mb' } as RunFeedEvent);
    const text = out.join('');
    expect(text.startsWith('Whole.')).toBe(true);
    expect(text).not.toContain('\u001b');
    expect(text.match(/31mb/g)).toHaveLength(1);
  });
});
