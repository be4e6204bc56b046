import { getShortestPaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import {
  createActor,
  getInitialSnapshot,
  getNextSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
} from 'xstate';
import { approvalMachine } from '../../machines/approval/machine.ts';
import { toolCallMachine, type ToolCallEvent } from '../../machines/tool-call/machine.ts';

describe('approval machine', () => {
  const start = () =>
    createActor(approvalMachine, { input: { approvalId: 'a1', runId: 'r1', expiresAt: 1000 } }).start();

  it('is single use: the first decision wins and later ones change nothing', () => {
    const a = start();
    a.send({ type: 'DECIDE', decision: 'approved', user: 'alice', now: 10 });
    expect(a.getSnapshot().status).toBe('done');
    // A later decision on the final snapshot (computed purely: sending to a done actor is a bug).
    const after = getNextSnapshot(approvalMachine, a.getSnapshot(), {
      type: 'DECIDE',
      decision: 'denied',
      user: 'mallory',
      now: 11,
    });
    expect(after.value).toBe('approved');
    expect(after.context).toEqual(a.getSnapshot().context);
    expect(a.getSnapshot().output).toEqual({ approvalId: 'a1', status: 'approved', decidedBy: 'alice' });
  });

  it('a decision after the deadline expires the approval instead', () => {
    const a = start();
    a.send({ type: 'DECIDE', decision: 'approved', user: 'alice', now: 1000 });
    expect(a.getSnapshot().output).toEqual({ approvalId: 'a1', status: 'expired', decidedBy: null });
  });

  it('an early EXPIRE is ignored; the deadline is data and survives a snapshot round trip', () => {
    const a = start();
    a.send({ type: 'EXPIRE', now: 999 });
    expect(a.getSnapshot().value).toBe('requested');
    const restored = createActor(approvalMachine, {
      snapshot: JSON.parse(JSON.stringify(a.getPersistedSnapshot())),
      input: { approvalId: 'x', runId: 'x', expiresAt: 0 },
    }).start();
    expect(restored.getSnapshot().context.expiresAt).toBe(1000);
    restored.send({ type: 'EXPIRE', now: 1000 });
    expect(restored.getSnapshot().value).toBe('expired');
  });
});

describe('tool-call machine (the audit lifecycle)', () => {
  /** Folds events over the machine purely (no actor: events after a final state are simply ignored). */
  const run = (events: ToolCallEvent[]) => {
    let s = getInitialSnapshot(toolCallMachine as AnyStateMachine);
    for (const e of events)
      s = getNextSnapshot(toolCallMachine as AnyStateMachine, s, e as EventFromLogic<AnyStateMachine>);
    return s.value;
  };

  it('accepts the lifecycles of DESIGN.md §3', () => {
    expect(
      run([{ type: 'policy_decided', decision: 'allow' }, { type: 'started' }, { type: 'completed' }]),
    ).toBe('completed');
    expect(
      run([
        { type: 'policy_decided', decision: 'approval-required' },
        { type: 'approval_requested' },
        { type: 'approval_resolved', approved: true },
        { type: 'started' },
        { type: 'failed' },
      ]),
    ).toBe('failed');
    expect(
      run([{ type: 'policy_decided', decision: 'allow' }, { type: 'started' }, { type: 'interrupted' }]),
    ).toBe('interrupted');
    // Restored with arguments redacted at rest: reported interrupted, never started or retried.
    expect(
      run([
        { type: 'policy_decided', decision: 'approval-required' },
        { type: 'approval_requested' },
        { type: 'approval_resolved', approved: true },
        { type: 'interrupted' },
        { type: 'retried' },
        { type: 'started' },
      ]),
    ).toBe('notRun');
    expect(run([{ type: 'policy_decided', decision: 'allow' }, { type: 'interrupted' }])).toBe('notRun');
  });

  it('never lets a call start without an allow or an approval', () => {
    expect(run([{ type: 'started' }])).toBe('proposed');
    expect(run([{ type: 'policy_decided', decision: 'deny' }, { type: 'started' }])).toBe('refused');
    expect(run([{ type: 'policy_decided', decision: 'approval-required' }, { type: 'started' }])).toBe(
      'needsApproval',
    );
    expect(
      run([
        { type: 'policy_decided', decision: 'approval-required' },
        { type: 'approval_requested' },
        { type: 'approval_resolved', approved: false },
        { type: 'started' },
      ]),
    ).toBe('refused');
  });

  it('every state that can start reaches started only through allowed or approved', () => {
    const paths = getShortestPaths(toolCallMachine, {
      events: [
        { type: 'policy_decided', decision: 'allow' },
        { type: 'policy_decided', decision: 'deny' },
        { type: 'policy_decided', decision: 'approval-required' },
        { type: 'approval_requested' },
        { type: 'approval_resolved', approved: true },
        { type: 'approval_resolved', approved: false },
        { type: 'started' },
        { type: 'completed' },
      ],
    });
    const toStarted = paths.filter((p) => p.state.value === 'started');
    expect(toStarted.length).toBeGreaterThan(0);
    for (const p of toStarted) {
      const before = p.steps[p.steps.length - 2]?.state.value;
      expect(['allowed', 'approved']).toContain(before);
    }
  });
});
