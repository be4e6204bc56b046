import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
});
afterAll(() => ws.cleanup());

const shell = (command: string) => ({ tool: 'shell', args: { command } });

describe('session approvals and the fail-closed reasons of a shell command', () => {
  it('an exact-command session approval lifts interpreter code, a read outside the roots and an unknown program path', () => {
    for (const [command, reason] of [
      ["python3 -c 'print(1)'", 'interpreter_code'],
      ['cat /etc/hosts', 'read_outside_roots'],
      ['./tool /opt/data', 'unknown_program_path'],
    ] as const) {
      const approvals = [{ id: 'se', sessionId: 's1', tool: 'shell', target: command }];
      for (const mode of ['allow', 'ask'] as const) {
        expect(evaluate(shell(command), ws.context({ mode })).reason, `${mode}: ${command}`).toBe(reason);
        const lifted = evaluate(
          shell(command),
          ws.context({ mode, sessionId: 's1', sessionApprovals: approvals }),
        );
        expect(lifted, `${mode}: ${command}`).toMatchObject({
          decision: 'allow',
          reason: 'session_approval',
        });
      }
    }
  });

  it('never lifts a path only known at run time: the same text may name another path next time', () => {
    const command = 'cat "$F"';
    const approvals = [{ id: 'se', sessionId: 's1', tool: 'shell', target: command }];
    for (const mode of ['allow', 'ask'] as const) {
      const d = evaluate(shell(command), ws.context({ mode, sessionId: 's1', sessionApprovals: approvals }));
      expect(d).toMatchObject({ decision: 'approval-required', reason: 'dynamic_path', humanRequired: true });
    }
  });

  it('never lifts a denial found by the fail-closed checks', () => {
    const command = 'cat ~/.ss?/id_rsa';
    const approvals = [{ id: 'se', sessionId: 's1', tool: 'shell', target: command }];
    const d = evaluate(
      shell(command),
      ws.context({ mode: 'ask', sessionId: 's1', sessionApprovals: approvals }),
    );
    expect(d).toMatchObject({ decision: 'deny', reason: 'sensitive_path' });
  });
});
