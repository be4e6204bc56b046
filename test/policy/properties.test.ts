import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decision, type DecisionKind } from '../../policy/decision.ts';
import { evaluate } from '../../policy/evaluate.ts';
import type { Mode } from '../../policy/risk.ts';
import type { ToolRule } from '../../policy/rules.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';
import { runs } from '../support/laws.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace({
    tools: {
      'ext.bare': { source: 'extension' },
      'ext.ping': { source: 'extension', risk: 'external', targetArgument: 'host', approvalDefault: 'allow' },
    },
    mcp: {
      servers: {
        gh: { command: 'gh-mcp', tools: { issues: {}, comment: { annotations: { destructiveHint: true } } } },
      },
    },
  });
});
afterAll(() => ws.cleanup());

const STRICTNESS: Record<DecisionKind, number> = { allow: 0, 'approval-required': 1, deny: 2 };
const TOOLS = [
  'read_file',
  'list_dir',
  'search_files',
  'write_file',
  'edit_file',
  'shell',
  'git_query',
  'http_request',
  'send_message',
  'spawn_agent',
  'request_directory_access',
  'ext.bare',
  'ext.ping',
  'mcp:gh:issues',
  'mcp:gh:comment',
  'no_such_tool',
];

const pathArb = fc.constantFrom(
  'src/a.ts',
  'README.md',
  '../outside.txt',
  '/etc/passwd',
  '~/.ssh/id_rsa',
  'docs/x',
  '.',
);
const argsArb = fc.oneof(
  fc.record({ path: pathArb }),
  fc.record({ path: pathArb, content: fc.string() }),
  fc.record({ path: pathArb, old: fc.string(), new: fc.string() }),
  fc.record({ path: pathArb, pattern: fc.string({ minLength: 1 }) }),
  fc.record({
    command: fc.constantFrom(
      'ls -la',
      'npm test',
      'rm -rf /',
      'eval "$x"',
      'cat ~/.ssh/id_rsa',
      'echo hi > out.txt',
    ),
  }),
  fc.record({ url: fc.webUrl(), method: fc.constantFrom('GET', 'POST') }),
  fc.record({ channel: fc.constantFrom('#ops', '#dev'), text: fc.string() }),
  fc.record({ host: fc.domain() }),
  fc.record({
    args: fc.array(fc.constantFrom('log', 'status', 'push', '--oneline'), { minLength: 1, maxLength: 3 }),
  }),
  fc.anything(),
);
const callArb = fc.record({ tool: fc.oneof(fc.constantFrom(...TOOLS), fc.string()), args: argsArb });
const modeArb = fc.constantFrom<Mode>('allow', 'ask', 'deny');
const ruleArb: fc.Arbitrary<ToolRule> = fc
  .record({
    id: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
    tool: fc.option(fc.oneof(fc.constantFrom(...TOOLS), fc.constant('mcp:*'), fc.constant('*')), {
      nil: undefined,
    }),
    risk: fc.option(fc.constantFrom('read', 'write-local', 'exec', 'external'), { nil: undefined }),
    effect: fc.constantFrom('ask', 'deny'),
  })
  .map((r) => {
    const rule: ToolRule = { id: r.id, effect: r.effect };
    if (r.tool !== undefined) rule.tool = r.tool;
    if (r.risk !== undefined) rule.risk = r.risk;
    if (rule.tool === undefined && rule.risk === undefined) rule.tool = '*';
    return rule;
  });
const approvalsArb = fc.record({
  sessionApprovals: fc.array(
    fc.record({
      id: fc.constant('se'),
      sessionId: fc.constant('s1'),
      tool: fc.constantFrom(...TOOLS),
      target: fc.constant(null),
    }),
    { maxLength: 3 },
  ),
  standingApprovals: fc.array(
    fc.record({
      id: fc.constant('sa'),
      ownerTaskId: fc.constant('t1'),
      tool: fc.constantFrom(...TOOLS),
      target: fc.constantFrom('#ops', 'example.com', 'ls -la'),
    }),
    { maxLength: 3 },
  ),
});

describe('policy laws', () => {
  it('adding any tool rule never turns deny or approval-required into allow', () => {
    fc.assert(
      fc.property(
        callArb,
        modeArb,
        fc.array(ruleArb, { maxLength: 3 }),
        ruleArb,
        approvalsArb,
        (call, mode, rules, extra, approvals) => {
          const base = { mode, rules, sessionId: 's1', taskId: 't1', ...approvals };
          const before = evaluate(call, ws.context(base));
          const after = evaluate(call, ws.context({ ...base, rules: [...rules, extra] }));
          expect(STRICTNESS[after.decision]).toBeGreaterThanOrEqual(STRICTNESS[before.decision]);
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('deny mode never yields allow, whatever the approvals', () => {
    fc.assert(
      fc.property(callArb, fc.array(ruleArb, { maxLength: 2 }), approvalsArb, (call, rules, approvals) => {
        const d = evaluate(
          call,
          ws.context({ mode: 'deny', rules, sessionId: 's1', taskId: 't1', ...approvals }),
        );
        expect(d.decision).toBe('deny');
      }),
      { numRuns: runs(400) },
    );
  });

  it('the same input always gives the same Decision, and every Decision validates', () => {
    fc.assert(
      fc.property(
        callArb,
        modeArb,
        fc.array(ruleArb, { maxLength: 2 }),
        approvalsArb,
        (call, mode, rules, approvals) => {
          const opts = { mode, rules, sessionId: 's1', taskId: 't1', ...approvals };
          const first = evaluate(call, ws.context(opts));
          const again = evaluate(structuredClone(call), ws.context(opts));
          expect(again).toEqual(first);
          expect(Decision.safeParse(first).success).toBe(true);
          expect(JSON.parse(JSON.stringify(first))).toEqual(first);
        },
      ),
      { numRuns: runs(400) },
    );
  });

  it('unattended interaction never yields a looser decision than attended', () => {
    fc.assert(
      fc.property(callArb, modeArb, (call, mode) => {
        const a = evaluate(call, ws.context({ mode, interaction: 'attended' }));
        const u = evaluate(call, ws.context({ mode, interaction: 'unattended' }));
        expect(u).toEqual(a);
      }),
      { numRuns: runs(200) },
    );
  });
});
