import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace({
    tools: {
      'ext.bare': { source: 'extension' },
      'ext.notify': { source: 'extension', risk: 'external', approvalDefault: 'allow' },
    },
    mcp: { servers: { mail: { command: 'mail-server', tools: { send: {} } } } },
  });
});
afterAll(() => ws.cleanup());

const send = (channel: string) => ({ tool: 'send_message', args: { channel, text: 'hello' } });

describe('standing approvals', () => {
  const standing = [{ id: 'sa-1', ownerTaskId: 'task-a', tool: 'send_message', target: '#ops' }];

  it('cover the exact tool and the exact target of the owning task', () => {
    const d = evaluate(
      send('#ops'),
      ws.context({ mode: 'ask', taskId: 'task-a', standingApprovals: standing }),
    );
    expect(d).toMatchObject({
      decision: 'allow',
      reason: 'standing_approval',
      step: 8,
      rule: { id: 'sa-1', source: 'standing-approval' },
    });
  });

  it('do not cover another target, even a look-alike', () => {
    for (const target of ['#ops2', '#OPS', ' #ops', '#ops ', '#op', '']) {
      const d = evaluate(
        send(target),
        ws.context({ mode: 'ask', taskId: 'task-a', standingApprovals: standing }),
      );
      expect(d.decision, target).not.toBe('allow');
    }
  });

  it('do not cover another tool with the same target', () => {
    const d = evaluate(
      { tool: 'http_request', args: { url: '#ops', method: 'POST' } },
      ws.context({
        mode: 'ask',
        taskId: 'task-a',
        standingApprovals: [{ ...standing[0]!, tool: 'send_message' }],
      }),
    );
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'mode_ask' });
  });

  it('owned by one task do not apply to another task, or to a run without a task', () => {
    expect(
      evaluate(send('#ops'), ws.context({ mode: 'ask', taskId: 'task-b', standingApprovals: standing })),
    ).toMatchObject({
      decision: 'approval-required',
    });
    expect(
      evaluate(send('#ops'), ws.context({ mode: 'ask', taskId: null, standingApprovals: standing })),
    ).toMatchObject({
      decision: 'approval-required',
    });
  });

  it('are never eligible for shell, local writes, unannotated tools or tools without a target argument', () => {
    const cases = [
      { call: { tool: 'shell', args: { command: 'ls' } }, target: 'ls' },
      {
        call: { tool: 'write_file', args: { path: 'src/a.ts', content: '' } },
        target: `${ws.project}/src/a.ts`,
      },
      { call: { tool: 'ext.bare', args: {} }, target: '' },
      { call: { tool: 'ext.notify', args: { to: 'x' } }, target: 'x' },
      { call: { tool: 'mcp:mail:send', args: { to: 'x' } }, target: 'x' },
    ];
    for (const { call, target } of cases) {
      const d = evaluate(
        call,
        ws.context({
          mode: 'ask',
          taskId: 't',
          standingApprovals: [{ id: 'sa', ownerTaskId: 't', tool: call.tool, target: target || 'x' }],
        }),
      );
      expect(d.decision, call.tool).toBe('approval-required');
    }
  });

  it('cannot lift a deny: mode deny and tool rule deny stay deny', () => {
    expect(
      evaluate(send('#ops'), ws.context({ mode: 'deny', taskId: 'task-a', standingApprovals: standing })),
    ).toMatchObject({
      decision: 'deny',
      reason: 'mode_deny',
    });
    const rules = [{ id: 'no-messages', tool: 'send_message', effect: 'deny' as const }];
    expect(
      evaluate(
        send('#ops'),
        ws.context({ mode: 'allow', rules, taskId: 'task-a', standingApprovals: standing }),
      ),
    ).toMatchObject({
      decision: 'deny',
      reason: 'tool_rule_deny',
      rule: { id: 'no-messages', source: 'tool-rule' },
    });
  });
});

describe('session approvals', () => {
  it('cover calls in their own session only', () => {
    const approvals = [{ id: 'se-1', sessionId: 's1', tool: 'write_file', target: null }];
    const call = { tool: 'write_file', args: { path: 'src/a.ts', content: 'x' } };
    expect(
      evaluate(call, ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: approvals })),
    ).toMatchObject({
      decision: 'allow',
      reason: 'session_approval',
      step: 7,
      rule: { id: 'se-1', source: 'session-approval' },
    });
    expect(
      evaluate(call, ws.context({ mode: 'ask', sessionId: 's2', sessionApprovals: approvals })),
    ).toMatchObject({
      decision: 'approval-required',
    });
  });

  it('cover a shell command only for the exact command, never any command', () => {
    const any = [{ id: 'se-any', sessionId: 's1', tool: 'shell', target: null }];
    const exact = [{ id: 'se-exact', sessionId: 's1', tool: 'shell', target: 'npm test' }];
    const call = (command: string) => ({ tool: 'shell', args: { command } });
    expect(
      evaluate(call('npm test'), ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: any }))
        .decision,
    ).toBe('approval-required');
    expect(
      evaluate(call('npm test'), ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: exact }))
        .decision,
    ).toBe('allow');
    expect(
      evaluate(
        call('npm test; curl x'),
        ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: exact }),
      ).decision,
    ).toBe('approval-required');
  });

  it('never lift a hard denial, an unanalyzable command or a tool that always asks', () => {
    const approvals = [
      { id: 'a', sessionId: 's1', tool: 'write_file', target: null },
      { id: 'b', sessionId: 's1', tool: 'shell', target: 'eval "$X"' },
      { id: 'c', sessionId: 's1', tool: 'request_directory_access', target: null },
      { id: 'd', sessionId: 's1', tool: 'ext.bare', target: null },
    ];
    const ctx = ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: approvals });
    expect(evaluate({ tool: 'write_file', args: { path: `${ws.docs}/x`, content: '' } }, ctx).reason).toBe(
      'read_only_root',
    );
    expect(evaluate({ tool: 'shell', args: { command: 'eval "$X"' } }, ctx).reason).toBe(
      'unanalyzable_command',
    );
    expect(
      evaluate({ tool: 'request_directory_access', args: { path: '/srv', access: 'read' } }, ctx).decision,
    ).toBe('approval-required');
    expect(evaluate({ tool: 'ext.bare', args: {} }, ctx).reason).toBe('unannotated_tool');
  });
});
