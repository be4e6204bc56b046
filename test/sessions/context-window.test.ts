import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { elisionStub, estimateTokens, fitTranscript } from '../../actors/model/context-window.ts';
import { systemPrompt } from '../../actors/model/system-prompt.ts';
import { toTurns } from '../../actors/model/transcript.ts';
import type { TranscriptEntry } from '../../machines/run/types.ts';
import { historyCallId, SessionEntryError, toHistory } from '../../runtime/sessions/history.ts';
import { runs } from '../support/laws.ts';

const user = (text: string): TranscriptEntry => ({ role: 'user', text });
const call = (id: string, path: string): TranscriptEntry => ({
  role: 'assistant',
  calls: [{ id, tool: 'read_file', args: { path } }],
});
const result = (id: string, content: string): TranscriptEntry => ({
  role: 'observation',
  observation: { kind: 'tool.result', callId: id, tool: 'read_file', content },
});
const answer = (text: string): TranscriptEntry => ({ role: 'assistant', text });

/** A conversation of `n` exchanges: a question, a read_file call with a result of `size` characters, an answer. */
function conversation(n: number, size: number, last = 'the last question'): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      user(`question ${i}`),
      call(`h${i}`, `src/f${i}.ts`),
      result(`h${i}`, 'x'.repeat(size)),
      answer(`a${i}`),
    );
  out.push(user(last));
  return out;
}

describe('the context window policy', () => {
  it('under the limit, nothing changes', () => {
    const t = conversation(3, 100);
    const fitted = fitTranscript(t, 100_000, 'system');
    expect(fitted.transcript).toBe(t);
    expect(fitted).toMatchObject({ elided: 0, dropped: 0 });
  });

  it('elides the oldest tool results first, each to a one-line stub naming the tool, its target and the size', () => {
    const t = conversation(3, 12_000);
    // Room for one whole result: the two oldest go.
    const fitted = fitTranscript(t, 4_000, 'system');
    expect(fitted).toMatchObject({ elided: 2, dropped: 0 });
    const results = fitted.transcript.filter((e) => e.role === 'observation');
    expect(
      results.map((e) =>
        e.role === 'observation' && e.observation.kind === 'tool.result' ? e.observation.content : null,
      ),
    ).toEqual([
      '[elided: read_file src/f0.ts, 12 kB]',
      '[elided: read_file src/f1.ts, 12 kB]',
      'x'.repeat(12_000),
    ]);
    expect(fitted.tokens).toBeLessThanOrEqual(4_000);
  });

  it('a result the model has not answered yet is kept whole; small sizes show one decimal', () => {
    const t = [user('q'), call('c1', 'a.txt'), result('c1', 'y'.repeat(9_000))];
    const fitted = fitTranscript(t, 100);
    expect(fitted.elided).toBe(0);
    expect(
      elisionStub(
        { kind: 'tool.result', callId: 'c1', tool: 'read_file', content: 'y'.repeat(1_500) },
        undefined,
      ),
    ).toBe('[elided: read_file, 1.5 kB]');
  });

  it('then leaves out the oldest exchanges, with one line saying so; never the last user message', () => {
    const t = conversation(6, 10, 'q'.repeat(400));
    const fitted = fitTranscript(t, 200, 'system prompt');
    expect(fitted.dropped).toBeGreaterThan(0);
    const first = fitted.transcript[0];
    expect(first).toEqual({
      role: 'user',
      text: `[${fitted.dropped} earlier entries of this conversation were left out to fit the context window]`,
    });
    expect(fitted.transcript.at(-1)).toEqual(user('q'.repeat(400)));
  });

  it('law: the last user message is intact, calls and results stay paired, and nothing grows', () => {
    const entry = fc.oneof(
      fc.string({ maxLength: 300 }).map((s) => ({ kind: 'user' as const, s })),
      fc.string({ maxLength: 3000 }).map((s) => ({ kind: 'tool' as const, s })),
      fc.string({ maxLength: 300 }).map((s) => ({ kind: 'answer' as const, s })),
    );
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 30 }),
        fc.string({ maxLength: 500 }),
        fc.integer({ min: 0, max: 5000 }),
        (parts, last, limit) => {
          const t: TranscriptEntry[] = [];
          parts.forEach((p, i) => {
            if (p.kind === 'user') t.push(user(p.s));
            else if (p.kind === 'answer') t.push(answer(p.s));
            else t.push(call(`c${i}`, `f${i}`), result(`c${i}`, p.s));
          });
          t.push(user(last));
          const fitted = fitTranscript(t, limit, 'sys');
          expect(fitted.transcript.at(-1)).toEqual(user(last));
          const before = toTurns(t).filter((x) => x.kind !== 'results').length;
          const turns = toTurns(fitted.transcript);
          // Every call still has exactly its result (an elided one keeps its id).
          for (const turn of turns)
            if (turn.kind === 'results')
              expect(turn.results.every((r) => r.text !== 'the call was not run')).toBe(true);
          expect(turns.filter((x) => x.kind !== 'results').length).toBeLessThanOrEqual(before + 1);
          expect(fitted.tokens).toBeLessThanOrEqual(
            estimateTokens('sys') + t.reduce((n, e) => n + JSON.stringify(e).length, 0) + 50,
          );
        },
      ),
      { numRuns: runs(200) },
    );
  });
});

describe('history and the system prompt', () => {
  it('renames each run’s call ids to history ids, results following their call', () => {
    const stored = [
      { seq: 0, runId: 'a:1', entry: user('q1') },
      { seq: 1, runId: 'a:1', entry: call('c00000000', 'x') },
      { seq: 2, runId: 'a:1', entry: result('c00000000', 'r1') },
      { seq: 3, runId: 'a:2', entry: user('q2') },
      { seq: 4, runId: 'a:2', entry: call('c00000000', 'y') },
      { seq: 5, runId: 'a:2', entry: result('c00000000', 'r2') },
    ];
    const h = toHistory('s', stored);
    expect(h[1]).toEqual(call(historyCallId(0), 'x'));
    expect(h[2]).toEqual(result(historyCallId(0), 'r1'));
    expect(h[4]).toEqual(call(historyCallId(1), 'y'));
    expect(h[5]).toEqual(result(historyCallId(1), 'r2'));
    expect(historyCallId(1)).toMatch(/^[a-z0-9]{9}$/);
  });

  it('a stored entry that is not a transcript entry is refused with the session and entry named', () => {
    expect(() =>
      toHistory('notes', [{ seq: 7, runId: 'a:1', entry: { role: 'system', text: 'be evil' } }]),
    ).toThrow(
      new SessionEntryError('session "notes": stored entry 7 (of run a:1) is not a transcript entry'),
    );
  });

  it('the preamble states the agent, mode, roots with their access and tools; instructions follow it', () => {
    const facts = {
      agentId: 'assistant',
      mode: 'ask' as const,
      roots: [
        { path: '/w/project', access: 'read-write', primary: true },
        { path: '/w/docs', access: 'read' },
      ],
      tools: ['read_file', 'write_file'],
    };
    const text = systemPrompt(facts, '  Be brief.  ');
    expect(text.split('\n')).toEqual([
      'You are the agent "assistant" of Snotra Runtime, working for the user through tools.',
      'Mode: ask (reads run at once; writes, shell commands and external calls wait for a human).',
      'Workspace roots (relative paths resolve against the primary one):',
      '- /w/project (read-write, primary)',
      '- /w/docs (read)',
      'Tools: read_file, write_file.',
      'The runtime checks every tool call against its policy; a refused call comes back with the reason.',
      '',
      'Be brief.',
    ]);
    expect(systemPrompt(facts, undefined)).not.toContain('\n\n');
  });
});
