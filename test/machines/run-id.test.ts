import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  iterationMessageId,
  makeChildRunId,
  makeRunId,
  makeSessionId,
  parseIterationMessageId,
  parseRunId,
  platformIdOfMessageId,
  platformMessageId,
} from '../../machines/run/run-id.ts';
import { runs } from '../support/laws.ts';

/** Agent ids as config allows them: letters, digits, "_" and "-". */
const agentId = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
/** Any non-empty message id, colons included (goal and platform message ids hold several). */
const messageId = fc.string({ minLength: 1, maxLength: 80 });

describe('run ids', () => {
  it('parse gives back the agent and message a run id was made from', () => {
    fc.assert(
      fc.property(agentId, messageId, (a, m) => {
        expect(parseRunId(makeRunId(a, m))).toEqual({ agentId: a, messageId: m });
      }),
      { numRuns: runs(500) },
    );
  });

  it('make gives back a run id that parses', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (id) => {
        const parts = parseRunId(id);
        if (parts !== null) expect(makeRunId(parts.agentId, parts.messageId)).toBe(id);
      }),
      { numRuns: runs(500) },
    );
  });

  it('refuses what is not a run id', () => {
    for (const id of ['', 'agent', ':m', 'agent:']) expect(parseRunId(id)).toBeNull();
  });

  it('keeps the known formats', () => {
    expect(makeRunId('assistant', 'm1')).toBe('assistant:m1');
    expect(makeChildRunId('assistant:m1', 'c1')).toBe('assistant:m1/c1');
    expect(makeSessionId('chat', 'm1')).toBe('chat:m1');
    expect(makeSessionId('task', 't')).toBe('task:t');
    expect(iterationMessageId('g', 2, 3)).toBe('goal:g:2:3');
    expect(platformMessageId('tg', 42, 7)).toBe('platform:tg:42:7');
  });
});

describe('goal iteration and platform message ids', () => {
  it('an iteration message id parses back to its goal, epoch and iteration', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/),
        fc.nat(),
        fc.nat(),
        (goalId, epoch, iteration) => {
          const run = parseRunId(makeRunId('agent', iterationMessageId(goalId, epoch, iteration)));
          expect(parseIterationMessageId(run?.messageId ?? '')).toEqual({ goalId, epoch, iteration });
        },
      ),
      { numRuns: runs(300) },
    );
    expect(parseIterationMessageId('chat:x')).toBeNull();
  });

  it('a platform message id gives back its connection id', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/), fc.integer(), fc.nat(), (p, chat, msg) => {
        expect(platformIdOfMessageId(platformMessageId(p, chat, msg))).toBe(p);
      }),
      { numRuns: runs(300) },
    );
    expect(platformIdOfMessageId('goal:g:1:1')).toBeNull();
  });
});
