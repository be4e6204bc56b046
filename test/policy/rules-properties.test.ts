import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionKind } from '../../policy/decision.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { Mode } from '../../policy/risk.ts';
import type { ToolRule } from '../../policy/rules.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { runs } from '../support/laws.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace({
    tools: {
      'ext.ping': { source: 'extension', risk: 'external', targetArgument: 'host', approvalDefault: 'allow' },
    },
  });
});
afterAll(() => ws.cleanup());

/** allow > approval-required > deny in what they permit; a larger number permits less. */
const STRICTNESS: Record<DecisionKind, number> = { allow: 0, 'approval-required': 1, deny: 2 };

const commandArb = fc.constantFrom(
  'git push',
  'sudo git push origin',
  'git -C x push',
  'git status',
  'echo git push',
  'git pu?h',
  'npm publish',
  'ls && rm -r build',
  'echo x > migrations/a.sql',
  'eval "$x"',
  'rm -rf /',
  "sh -c 'curl https://example.com'",
  'cat README.md',
);
const pathArb = fc.constantFrom(
  'migrations/a.sql',
  'src/a.ts',
  'README.md',
  '../x',
  'm/../migrations/b',
  '.',
);
const callArb = fc.oneof(
  fc.record({ tool: fc.constant('shell'), args: fc.record({ command: commandArb }) }),
  fc.record({
    tool: fc.constant('shell'),
    args: fc.record({ command: commandArb, cwd: fc.constantFrom('src', 'migrations', '.') }),
  }),
  fc.record({ tool: fc.constantFrom('read_file', 'list_dir'), args: fc.record({ path: pathArb }) }),
  fc.record({
    tool: fc.constant('write_file'),
    args: fc.record({ path: pathArb, content: fc.constant('x') }),
  }),
  fc.record({
    tool: fc.constant('http_request'),
    args: fc.record({
      url: fc.oneof(fc.webUrl(), fc.constantFrom('https://api.example.com/', 'https://exa mple.com')),
      method: fc.constant('GET'),
    }),
  }),
  fc.record({
    tool: fc.constant('send_message'),
    args: fc.record({ channel: fc.constantFrom('#ops', '#dev'), text: fc.constant('hi') }),
  }),
  fc.record({ tool: fc.constant('ext.ping'), args: fc.record({ host: fc.domain() }) }),
  fc.record({ tool: fc.constant('read_file'), args: fc.anything() }),
);

const ruleArb: fc.Arbitrary<ToolRule> = fc
  .record({
    id: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
    tool: fc.option(fc.constantFrom('shell', 'write_file', 'http_request', '*'), { nil: undefined }),
    risk: fc.option(fc.constantFrom('read', 'write-local', 'exec', 'external'), { nil: undefined }),
    command: fc.option(fc.constantFrom('git push', 'git', 'npm publish', 'curl', 'rm', 'sudo'), {
      nil: undefined,
    }),
    path: fc.option(fc.constantFrom('migrations/**', 'migrations', 'src', '**'), { nil: undefined }),
    access: fc.option(fc.constantFrom('read', 'write'), { nil: undefined }),
    target: fc.option(fc.constantFrom('*.example.com', '#ops', '*', 'https://*'), { nil: undefined }),
    effect: fc.constantFrom('ask', 'deny'),
  })
  .map((r) => {
    const rule: ToolRule = { id: r.id, effect: r.effect };
    if (r.tool !== undefined && (r.command === undefined || r.tool === 'shell' || r.tool === '*'))
      rule.tool = r.tool;
    if (r.risk !== undefined) rule.risk = r.risk;
    if (r.command !== undefined) rule.command = r.command;
    if (r.path !== undefined) {
      rule.path = r.path;
      if (r.access !== undefined) rule.access = r.access;
    }
    if (r.target !== undefined) rule.target = r.target;
    if (Object.keys(rule).length === 2) rule.command = 'git push';
    return rule;
  });
const modeArb = fc.constantFrom<Mode>('allow', 'ask', 'deny');
const approvalsArb = fc.record({
  sessionApprovals: fc.array(
    fc.record({
      id: fc.constant('se'),
      sessionId: fc.constant('s1'),
      tool: fc.constantFrom('shell', 'write_file', 'http_request', 'send_message', 'ext.ping'),
      target: fc.oneof(fc.constant(null), commandArb),
    }),
    { maxLength: 3 },
  ),
  standingApprovals: fc.array(
    fc.record({
      id: fc.constant('sa'),
      ownerTaskId: fc.constant('t1'),
      tool: fc.constantFrom('http_request', 'send_message', 'ext.ping'),
      target: fc.constantFrom('#ops', 'https://api.example.com/', 'example.com'),
    }),
    { maxLength: 3 },
  ),
});

describe('argument rules only narrow (property)', () => {
  it('adding any rule, anywhere in the list, never makes a decision more permissive', () => {
    fc.assert(
      fc.property(
        callArb,
        modeArb,
        fc.array(ruleArb, { maxLength: 3 }),
        ruleArb,
        fc.nat(3),
        approvalsArb,
        (call, mode, rules, extra, at, approvals) => {
          const base = { mode, rules, sessionId: 's1', taskId: 't1', ...approvals };
          const before = evaluate(call, ws.context(base));
          const more = [...rules.slice(0, at), extra, ...rules.slice(at)];
          const after = evaluate(call, ws.context({ ...base, rules: more }));
          expect(
            STRICTNESS[after.decision],
            JSON.stringify({ call, more, before, after }),
          ).toBeGreaterThanOrEqual(STRICTNESS[before.decision]);
          // A rule never lifts a human requirement that does not come from a rule.
          if (before.decision === 'approval-required' && before.rule.source !== 'tool-rule')
            expect(after.decision).not.toBe('allow');
        },
      ),
      { numRuns: runs(500) },
    );
  });

  it('a rule that decides is named in the Decision, and only ask or deny come from rules', () => {
    fc.assert(
      fc.property(
        callArb,
        modeArb,
        fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
        (call, mode, rules) => {
          const d = evaluate(call, ws.context({ mode, rules }));
          if (d.rule.source === 'tool-rule') {
            expect(rules.map((r) => r.id)).toContain(d.rule.id);
            expect(d.decision).not.toBe('allow');
            expect(['tool_rule_ask', 'tool_rule_deny']).toContain(d.reason);
          }
        },
      ),
      { numRuns: runs(300) },
    );
  });
});
