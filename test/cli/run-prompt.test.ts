import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunFeedEvent } from '../../runtime/events.ts';
import { ApprovalDesk, type Decider } from '../../surfaces/cli/run/desk.ts';
import { escapeForTerminal } from '../../surfaces/cli/run/escape.ts';
import { approvalCard } from '../../surfaces/cli/run/render.ts';
import { cleanReason, parseAnswer, type ApprovalTerminal } from '../../surfaces/cli/run/prompt.ts';
import { eventually } from '../support/runtime.ts';
import { runs } from '../support/laws.ts';

type Requested = Extract<RunFeedEvent, { type: 'approval.requested' }>;

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/u;

const request = (over: Partial<Requested> = {}): Requested => ({
  type: 'approval.requested',
  runId: 'worker:1',
  ts: 1,
  agentId: 'worker',
  parentRunId: null,
  approvalId: 'apr:worker:1:c1',
  callId: 'c1',
  tool: 'shell',
  risk: 'exec',
  reason: 'mode_ask',
  rule: { id: 'mode.ask', source: 'mode' },
  targets: [],
  args: { command: 'ls' },
  interaction: 'attended',
  sessionId: 's',
  expiresAt: 2,
  options: { session: true, standing: false },
  preview: { kind: 'command', command: 'ls', cwd: '/p' },
  ...over,
});

describe('what the terminal is shown', () => {
  it('never contains a control or reordering character, on one line or many', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(escapeForTerminal(s)).not.toMatch(UNSAFE);
        expect(escapeForTerminal(s)).not.toMatch(/[\n\t]/);
        expect(escapeForTerminal(s, true)).not.toMatch(UNSAFE);
      }),
      { numRuns: runs(500) },
    );
  });

  it('leaves ordinary text alone and makes escapes visible', () => {
    expect(escapeForTerminal('rm -r build && ls ./ö')).toBe('rm -r build && ls ./ö');
    expect(escapeForTerminal('a\u001b[2Jb\u202ec\rd')).toBe('a\\x1b[2Jb\\u{202e}c\\x0dd');
    expect(escapeForTerminal('two\nlines\ttab', true)).toBe('two\nlines\ttab');
  });

  it('escapes what the model controls in the card: tool name, command, targets, diff lines', () => {
    const card = approvalCard(
      request({
        tool: 'mcp:x:\u001b]0;t\u0007',
        targets: [
          { argument: 'path', input: 'a', resolved: '/p/\u001b[31ma', root: 'p', access: 'read-write' },
        ],
        preview: { kind: 'command', command: 'echo \u001b[2J', cwd: '/p' },
      }),
    );
    expect(card).not.toMatch(UNSAFE);
    expect(card).toContain('mcp:x:\\x1b]0;t\\x07');
    expect(card).toContain('command: echo \\x1b[2J');
    expect(card).toContain('target:  /p/\\x1b[31ma  (path, root p, read-write)');
  });
});

describe('answers', () => {
  it.each([
    ['o', 'once'],
    [' YES ', 'once'],
    ['s', 'session'],
    ['a', null],
    ['always', null],
    ['d', 'deny'],
    ['no', 'deny'],
    ['', null],
    ['ok', null],
  ])('%j → %s (session offered, always not)', (text, kind) => {
    expect(parseAnswer(text, { session: true, standing: false })).toBe(kind);
  });

  it('offers nothing that is not eligible', () => {
    expect(parseAnswer('s', { session: false, standing: true })).toBeNull();
    expect(parseAnswer('a', { session: false, standing: true })).toBe('standing');
  });

  it('cleans a deny reason: controls removed, trimmed, capped, empty is none', () => {
    expect(cleanReason('  use\u001b[31m staging\n ')).toBe('use [31m staging');
    expect(cleanReason('   ')).toBeNull();
    expect(cleanReason(null)).toBeNull();
    expect(cleanReason('x'.repeat(5000))).toHaveLength(1000);
  });
});

/** A terminal fed by a list of answers (null = end of input); `hold` keeps a question open. */
function fakeTerminal(answers: Array<string | null | 'hold'>) {
  const written: string[] = [];
  const term: ApprovalTerminal = {
    write: (t) => void written.push(t),
    ask: (q, signal) => {
      written.push(q);
      const next = answers.shift();
      if (next === 'hold' || next === undefined)
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve(null)));
      return Promise.resolve(next);
    },
    close: () => {},
  };
  return { term, written };
}

function recorder(grant: (scope: string) => void = () => {}) {
  const calls: string[] = [];
  const ok = { ok: true, approval: {} } as ReturnType<Decider['approveWithGrant']>;
  const decider: Decider = {
    decideAsync: (id, decision, user, reason) => {
      calls.push(`${decision}:${id}:${user}:${reason ?? '-'}`);
      return Promise.resolve(ok);
    },
    approveWithGrant: (id, scope, user) => {
      grant(scope);
      calls.push(`grant-${scope}:${id}:${user}`);
      return ok;
    },
  };
  return { calls, decider };
}

describe('the approval desk', () => {
  it('drops open and queued questions undecided when the run is over', async () => {
    const { term, written } = fakeTerminal(['hold']);
    const { calls, decider } = recorder();
    const desk = new ApprovalDesk(term, decider, 'local:me');
    desk.ask(request({ approvalId: 'a1' }));
    desk.ask(request({ approvalId: 'a2' }));
    await eventually(() => written.some((w) => w.includes('answer')), 5000, 'the first question');
    desk.close();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([]);
    expect(written.join('')).not.toContain('decided elsewhere');
    expect(written.filter((w) => w.includes('approval needed'))).toHaveLength(1);
  });

  it('records once, session and deny-with-reason as the local user, in arrival order', async () => {
    const { term } = fakeTerminal(['o', 's', 'x', 'd', 'not now']);
    const { calls, decider } = recorder();
    const desk = new ApprovalDesk(term, decider, 'local:me');
    desk.ask(request({ approvalId: 'a1' }));
    desk.ask(request({ approvalId: 'a2' }));
    desk.ask(request({ approvalId: 'a3' }));
    await eventually(() => calls.length === 3, 5000, 'three decisions');
    expect(calls).toEqual([
      'approved:a1:local:me:-',
      'grant-session:a2:local:me',
      'denied:a3:local:me:not now',
    ]);
  });

  it('fails closed: end of input or three bad answers deny without a reason', async () => {
    const { term } = fakeTerminal([null, 'x', 'q', 'z']);
    const { calls, decider } = recorder();
    const desk = new ApprovalDesk(term, decider, 'local:me');
    desk.ask(request({ approvalId: 'a1' }));
    desk.ask(request({ approvalId: 'a2' }));
    await eventually(() => calls.length === 2, 5000, 'two denials');
    expect(calls).toEqual(['denied:a1:local:me:-', 'denied:a2:local:me:-']);
  });

  it('closes the question when the request is decided elsewhere, and asks again when a grant is refused', async () => {
    const { term, written } = fakeTerminal(['hold', 's', 'o']);
    const { calls, decider } = recorder((scope) => {
      if (scope === 'session') throw new Error('approval a2: not eligible');
    });
    const desk = new ApprovalDesk(term, decider, 'local:me');
    desk.ask(request({ approvalId: 'a1' }));
    desk.ask(request({ approvalId: 'a2' }));
    await eventually(() => written.some((w) => w.includes('answer')), 5000, 'the first question');
    desk.resolved('a1');
    await eventually(() => calls.length === 1, 5000, 'the second decision');
    expect(calls).toEqual(['approved:a2:local:me:-']);
    expect(written.join('')).toContain('was decided elsewhere');
    expect(written.join('')).toContain('not recorded: approval a2: not eligible');
  });
});

describe('the approval desk: a budget request asks "continue with +N?"', () => {
  const budget = (approvalId: string): Extract<RunFeedEvent, { type: 'budget.requested' }> => ({
    type: 'budget.requested',
    runId: 'worker:1',
    ts: 1,
    agentId: 'worker',
    parentRunId: null,
    approvalId,
    dimension: 'tokens',
    used: 1200,
    limit: 1000,
    grant: 1000,
    reason: 'budget_tokens',
    interaction: 'attended',
    sessionId: 's',
    expiresAt: 2,
  });

  it('yes approves, no denies; end of input and three bad answers decline (fail closed)', async () => {
    const { term, written } = fakeTerminal(['y', 'no', null, 'once', 'always', 'sure']);
    const { calls, decider } = recorder();
    const desk = new ApprovalDesk(term, decider, 'local:me');
    for (const id of ['b1', 'b2', 'b3', 'b4']) desk.ask(budget(id));
    await eventually(() => calls.length === 4, 5000, 'four decisions');
    expect(calls).toEqual([
      'approved:b1:local:me:-',
      'denied:b2:local:me:-',
      'denied:b3:local:me:-',
      'denied:b4:local:me:-',
    ]);
    expect(written[0]).toBe('  budget: tokens used 1200 of 1000; continue with +1000? [y]es  [n]o: ');
  });
});
