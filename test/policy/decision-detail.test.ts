import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decision } from '../../policy/decision.ts';
import { evaluate } from '../../policy/evaluate.ts';
import { explainDecision, REASON_TEXT } from '../../policy/explain.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { runs } from '../support/laws.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
});
afterAll(() => ws.cleanup());

const check = (tool: string, args: unknown, tools?: string[]) =>
  evaluate({ tool, args }, ws.context({ mode: 'allow', ...(tools ? { tools } : {}) }));

describe('invalid_arguments names the argument and what was expected', () => {
  const cases: [string, unknown, string][] = [
    ['read_file', { path: 42 }, 'path: expected string, got number'],
    ['read_file', {}, 'path: expected string, got missing'],
    ['read_file', { path: null }, 'path: expected string, got null'],
    ['read_file', { path: ['a'] }, 'path: expected string, got array'],
    ['read_file', { path: 'a', startLine: 0 }, 'startLine: expected at least 1'],
    ['read_file', { path: '' }, 'path: expected at least 1 characters'],
    ['read_file', { path: 'a', mode: 'x' }, '(arguments): unexpected argument mode'],
    [
      'http_request',
      { url: 'https://x', method: 'FETCH' },
      'method: expected one of "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"',
    ],
    [
      'http_request',
      { url: 'https://x', method: 'GET', headers: { a: 1 } },
      'headers.a: expected string, got number',
    ],
    ['git_query', { args: ['push'] }, 'args: the first argument must be one of log, status, diff, show'],
    ['git_query', { args: [1] }, 'args[0]: expected string, got number'],
    ['read_file', 'not an object', '(arguments): expected object, got string'],
    ['shell', { command: 'ls', cwd: 7 }, 'cwd: expected string, got number'],
  ];
  for (const [tool, args, detail] of cases) {
    it(`${tool} ${JSON.stringify(args)} → ${detail}`, () => {
      const d = check(tool, args);
      expect(d).toMatchObject({ decision: 'deny', reason: 'invalid_arguments', step: 1, detail });
      expect(Decision.safeParse(d).success).toBe(true);
    });
  }

  it('names at most three issues and says how many more there were', () => {
    const d = check('http_request', { url: 1, method: 2, body: 3, headers: 4, idempotencyKey: 5 });
    expect(d.detail).toMatch(
      /^url: expected string, got number; method: .*; body: expected string, got number; and 2 more$/,
    );
  });

  it('an odd key is not echoed (a key can carry data)', () => {
    const d = check('read_file', { path: 'a', ghp_0123456789abcdefghijklmnopqrstuvwxyz0123: 1 });
    expect(d.detail).toBe('(arguments): unexpected argument …');
  });

  it('the explanation shows the detail', () => {
    expect(explainDecision('read_file', check('read_file', { path: 42 }))).toContain(
      'detail: path: expected string, got number',
    );
  });
});

describe('argument values never reach the detail (property)', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9]{12,40}$/).map((s) => `S3cr3t${s}`);
  it('whatever wrong value or extra argument a call carries, its value is not in the Decision', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('read_file', 'write_file', 'shell', 'http_request', 'send_message', 'git_query'),
        secret,
        fc.constantFrom<(s: string) => Record<string, unknown>>(
          (s) => ({ path: { nested: s } }),
          (s) => ({ path: 'a', content: 1, extra: s }),
          (s) => ({ command: [s] }),
          (s) => ({ url: 5, method: s }),
          (s) => ({ channel: s, text: { s } }),
          (s) => ({ args: [s, 1] }),
          (s) => ({ [`k${s}`]: s }),
        ),
        (tool, s, make) => {
          const d = check(tool, make(s));
          expect(d.reason).toBe('invalid_arguments');
          expect(JSON.stringify(d)).not.toContain(s);
          expect(d.detail?.length ?? 0).toBeLessThanOrEqual(400);
        },
      ),
      { numRuns: runs(300) },
    );
  });
});

describe('tool_not_granted is apart from tool_not_found', () => {
  it('a defined tool outside the agent’s tools is tool_not_granted, with its risk', () => {
    const d = check('write_file', { path: 'a', content: 'x' }, ['read_file']);
    expect(d).toEqual({
      decision: 'deny',
      reason: 'tool_not_granted',
      risk: 'write-local',
      rule: { id: 'metadata.tool-not-granted', source: 'metadata' },
      targets: [],
      humanRequired: false,
      step: 1,
      detail: '"write_file" is defined but not in this agent\'s tools',
    });
  });
  it('an undefined tool is tool_not_found, without a detail (its name is untrusted input)', () => {
    const d = check('format_disk', {}, ['read_file']);
    expect(d).toMatchObject({ decision: 'deny', reason: 'tool_not_found' });
    expect(d.detail).toBeUndefined();
  });
  it('both have their own sentence', () => {
    expect(REASON_TEXT.tool_not_granted).not.toBe(REASON_TEXT.tool_not_found);
  });
});
