import { getSimplePaths } from '@xstate/graph';
import { createActor, getNextSnapshot } from 'xstate';
import { describe, expect, it } from 'vitest';
import { approvalMachine, type ApprovalEvent } from '../../machines/approval/machine.ts';
import { graphOf } from '../../runtime/viz/machines.ts';

const EXPIRES = 1_000;
// The events the world produces: decisions before and after the deadline, expiry early and due.
const EVENTS: ApprovalEvent[] = [
  { type: 'DECIDE', decision: 'approved', user: 'u', now: 10 },
  { type: 'DECIDE', decision: 'denied', user: 'u', now: 10 },
  { type: 'DECIDE', decision: 'approved', user: 'u', now: EXPIRES },
  { type: 'EXPIRE', now: 10 },
  { type: 'EXPIRE', now: EXPIRES + 1 },
];
const input = { approvalId: 'a1', runId: 'r1', expiresAt: EXPIRES };

describe('model-based restart tests of the approval machine', () => {
  it('every simple path, persisted and restored at every state, ends as the uninterrupted path does; decisions are single use', () => {
    const paths = getSimplePaths(approvalMachine, { events: EVENTS, input });
    const reached = new Set<string>();
    let restores = 0;
    for (const path of paths) {
      const events = path.steps.map((s) => s.event as ApprovalEvent).filter((e) => EVENTS.includes(e));
      const straight = createActor(approvalMachine, { input }).start();
      for (const e of events) straight.send(e);
      reached.add(String(straight.getSnapshot().value));
      const expected = straight.getSnapshot();
      // A later, different decision changes nothing once decided (single use).
      if (expected.status === 'done') {
        const after = getNextSnapshot(approvalMachine, expected, {
          type: 'DECIDE',
          decision: 'denied',
          user: 'late',
          now: 20,
        });
        expect(after.value).toEqual(expected.value);
        expect(after.context).toEqual(expected.context);
      }
      for (let k = 0; k <= events.length; k++) {
        const first = createActor(approvalMachine, { input }).start();
        for (const e of events.slice(0, k)) first.send(e);
        const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot())) as never;
        first.stop();
        const restored = createActor(approvalMachine, { input, snapshot: persisted }).start();
        for (const e of events.slice(k)) restored.send(e);
        const s = restored.getSnapshot();
        expect(s.value, `path ${events.map((e) => e.type).join('→')} restored at ${k}`).toEqual(
          expected.value,
        );
        expect(s.context).toEqual(expected.context);
        if (s.status === 'done') expect(s.output?.status).toBe(expected.context.status);
        restores++;
      }
    }
    const finals = (graphOf('approval')?.states ?? []).filter((s) => s.type === 'final').map((s) => s.key);
    // Every final state of the machine is reached by some path (a new one would have to be too).
    for (const f of finals) expect([...reached], f).toContain(f);
    expect(restores).toBeGreaterThan(paths.length);
  });
});
