import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import type { RunContext } from '../../machines/run/types.ts';
import { Inspector, statePath, type ActorEvent } from '../../runtime/inspect/index.ts';
import type { ApprovalRecord } from '../../store/index.ts';
import { runs } from '../support/laws.ts';

/** A root snapshot inspection event of a run actor, as XState sends it. */
function snapshotEvent(ctx: RunContext, value: unknown, event: Record<string, unknown>): InspectionEvent {
  return {
    type: '@xstate.snapshot',
    rootId: 'x:1',
    actorRef: { sessionId: 'x:1' },
    snapshot: { status: 'active', value, context: ctx },
    event,
  } as unknown as InspectionEvent;
}

function context(secret: string, parentRunId: string | null, runId = 'worker:1'): RunContext {
  return {
    runId,
    agentId: 'worker',
    sessionId: `session ${secret}`,
    taskId: `task ${secret}`,
    parentRunId,
    surface: 'scheduled',
    interaction: 'unattended',
    message: `deploy with ${secret}`,
    budget: { modelCalls: 5, toolCalls: 7, wallTimeMs: 60_000 },
    startedAt: 0,
    transcript: [
      { role: 'user', text: secret },
      {
        role: 'assistant',
        text: `model says ${secret}`,
        calls: [{ id: 'c1', tool: 'http_request', args: { h: secret } }],
      },
    ],
    calls: [{ id: 'c1', tool: 'http_request', args: { url: `https://x/?k=${secret}` } }],
    cursor: 0,
    decision: null,
    approvalId: 'apr-1',
    used: { modelCalls: 1, toolCalls: 0 },
    steps: 1,
    denials: { [secret]: 1 },
    outcome: null,
  } as unknown as RunContext;
}

function approval(secret: string): ApprovalRecord {
  return {
    id: 'apr-1',
    v: 1,
    callId: 'c1',
    runId: 'worker:1',
    sessionId: `session ${secret}`,
    taskId: null,
    agentId: 'worker',
    parentAgentId: null,
    parentRunId: null,
    surface: 'scheduled',
    tool: 'http_request',
    args: { url: `https://x/?k=${secret}`, headers: { Authorization: `Bearer ${secret}` } },
    target: `https://x/?k=${secret}`,
    risk: 'external',
    reason: 'mode_ask',
    ruleId: `rule ${secret}`,
    idempotencyKey: `key ${secret}`,
    resumeCheckpoint: { secret },
    createdAt: 0,
    expiresAt: 1,
    status: 'pending',
    decidedBy: null,
    decidedAt: null,
    decisionReason: null,
  } as unknown as ApprovalRecord;
}

// Secrets that cannot be a substring of what the tree may show (ids, machine and state names).
const secretArb = fc.string({ minLength: 6, maxLength: 40 }).map((s) => `S3!${s}`);

describe('the actor tree shows ids, states and budgets only', () => {
  it('no argument, message, model text, target, rule or event payload reaches the tree or its events (property)', () => {
    fc.assert(
      fc.property(secretArb, (secret) => {
        const inspector = new Inspector();
        const events: ActorEvent[] = [];
        inspector.on((e) => events.push(e));
        inspector.onRunInspection(
          'worker:1',
          snapshotEvent(context(secret, null), { running: 'thinking' }, { type: 'MODEL', text: secret }),
        );
        inspector.approvalOpened(approval(secret), 'unattended');
        inspector.onRunInspection(
          'worker:1',
          snapshotEvent(context(secret, null), 'waiting_for_approval', { type: 'x', secret }),
        );
        const shown = JSON.stringify([inspector.snapshot(), events]);
        // As JSON would carry it (escaped); the `S3!` prefix appears nowhere else.
        expect(shown).not.toContain(JSON.stringify(secret).slice(1, -1));
        expect(shown).not.toContain('S3!');
        expect(events.map((e) => e.type)).toEqual(['actor.created', 'actor.created', 'actor.state']);
        expect(inspector.snapshot().actors[0]).toMatchObject({
          id: 'worker:1',
          parked: true,
          children: [{ id: 'apr-1', tool: 'http_request' }],
        });
      }),
      { numRuns: runs(200) },
    );
  });

  it('an event type that is not a plain short name is not shown as the cause', () => {
    const inspector = new Inspector();
    const events: ActorEvent[] = [];
    inspector.on((e) => events.push(e));
    inspector.onRunInspection(
      'worker:1',
      snapshotEvent(context('s', null), 'waiting_for_approval', { type: 'has space and secret' }),
    );
    inspector.onRunInspection(
      'worker:1',
      snapshotEvent(context('s', null), { running: 'thinking' }, { type: 'xstate.done.actor.0.run' }),
    );
    expect(events.map((e) => e.cause)).toEqual([undefined, 'xstate.done.actor.0.run']);
  });

  it('changes are numbered; an unchanged snapshot is no change; sub-agent runs go under their parent; a loop is cut', () => {
    const inspector = new Inspector();
    const events: ActorEvent[] = [];
    inspector.on((e) => events.push(e));
    const parent = context('s', null, 'worker:p');
    inspector.onRunInspection('worker:p', snapshotEvent(parent, { running: 'acting' }, { type: 'A' }));
    inspector.onRunInspection('worker:p', snapshotEvent(parent, { running: 'acting' }, { type: 'B' }));
    inspector.onRunInspection(
      'helper:c',
      snapshotEvent(context('s', 'worker:p', 'helper:c'), { running: 'thinking' }, { type: 'C' }),
    );
    expect(events.map((e) => [e.seq, e.type, e.actor.id, e.actor.parentId])).toEqual([
      [1, 'actor.created', 'worker:p', null],
      [2, 'actor.created', 'helper:c', 'worker:p'],
    ]);
    expect(inspector.snapshot()).toMatchObject({
      seq: 2,
      actors: [{ id: 'worker:p', children: [{ id: 'helper:c' }] }],
    });
    // Two runs naming each other as parent (never made by delegation): both shown, at the top.
    const loop = new Inspector();
    loop.onRunInspection('a', snapshotEvent(context('s', 'b', 'a'), 'resuming', { type: 'A' }));
    loop.onRunInspection('b', snapshotEvent(context('s', 'a', 'b'), 'resuming', { type: 'A' }));
    const ids = (nodes: readonly { id: string; children: readonly unknown[] }[]): string[] =>
      nodes.flatMap((n) => [n.id, ...ids(n.children as never)]);
    expect(ids(loop.snapshot().actors).sort()).toEqual(['a', 'b']);
  });

  it('the tree is bounded: past its capacity new nodes are counted, not added', () => {
    const inspector = new Inspector({ capacity: 3 });
    for (let i = 0; i < 5; i += 1)
      inspector.onRunInspection(
        `r${i}`,
        snapshotEvent(context('s', null, `r${i}`), 'resuming', { type: 'A' }),
      );
    expect(inspector.snapshot()).toMatchObject({ seq: 3, omitted: 2 });
    expect(inspector.snapshot().actors).toHaveLength(3);
  });

  it('state values as dotted paths', () => {
    expect(statePath('idle')).toBe('idle');
    expect(statePath({ running: 'thinking' })).toBe('running.thinking');
    expect(statePath({ running: { acting: 'checking' } })).toBe('running.acting.checking');
    expect(statePath({ a: 'x', b: { c: 'y' } })).toBe('a.x,b.c.y');
    expect(statePath(null)).toBe('');
  });
});
