import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { RunFeedEvent } from '../../runtime/events.ts';
import { RUN_FEED_EVENT_TYPES } from '../../runtime/events.ts';
import { GrantNotEligibleError, type Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const SECRET = 'sk-live-feedtest-0123456789';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  fx?.cleanup();
  rt = null;
  fx = null;
});

describe('the runtime run feed', () => {
  it('carries only redacted values: model text, tool args, tool content and the final answer', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'allow' } } });
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            text: `using ${SECRET}`,
            calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: `key ${SECRET}` } }],
          },
        },
        { expect: { kind: 'tool.result' }, respond: { kind: 'final', text: `done with ${SECRET}` } },
      ],
    });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(model, { onRunEvent: (e) => events.push(e) });
    runtimeInternals(rt).store.redactor.registerSecret(SECRET);
    const runId = await rt.runs.submit('worker', 'go', { sessionId: 's1' });
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    expect(fx.sent()).toEqual([`#ops key ${SECRET}`]);
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'model.text',
      'tool.proposed',
      'tool.decided',
      'tool.completed',
      'model.text',
      'run.completed',
    ]);
    for (const e of events) expect(RUN_FEED_EVENT_TYPES).toContain(e.type);
    expect(events[0]).toMatchObject({
      runId,
      agentId: 'worker',
      parentRunId: null,
      sessionId: 's1',
      surface: 'cli',
    });
    expect(events[2]).toMatchObject({ args: { channel: '#ops', text: 'key [REDACTED]' } });
    expect(events.at(-1)).toMatchObject({ text: 'done with [REDACTED]' });
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it('grants only what the request is eligible for, in the approval’s transaction; the next call rides on a session grant', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const model = new ScriptedModel({
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'a.txt', content: 'a' } }],
          },
        },
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c2', tool: 'write_file', args: { path: 'b.txt', content: 'b' } }],
          },
        },
        { respond: { kind: 'final', text: 'ok' } },
      ],
    });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(model, { onRunEvent: (e) => events.push(e) });
    const runId = await rt.runs.submit('worker', 'write', { sessionId: 's2', taskId: 't2' });
    const requested = await eventually(
      () => events.find((e) => e.type === 'approval.requested'),
      10_000,
      'an approval request',
    );
    if (requested.type !== 'approval.requested') throw new Error('unreachable');
    expect(requested.options).toEqual({ session: true, standing: false });
    expect(() => rt?.approvals.approveWithGrant(requested.approvalId, 'standing', 'local:me')).toThrow(
      GrantNotEligibleError,
    );
    expect(runtimeInternals(rt).store.approvals.get(requested.approvalId)?.status).toBe('pending');
    expect(runtimeInternals(rt).store.standingApprovals.listAllActive()).toEqual([]);
    expect(rt.approvals.approveWithGrant(requested.approvalId, 'session', 'local:me')).toMatchObject({
      ok: true,
    });
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    expect(runtimeInternals(rt).store.sessionApprovals.listActive('s2')).toEqual([
      expect.objectContaining({ tool: 'write_file', target: null, grantedBy: 'local:me' }),
    ]);
    const decided = events.filter((e) => e.type === 'tool.decided');
    expect(decided.map((e) => (e.type === 'tool.decided' ? e.decision.reason : ''))).toEqual([
      'mode_ask',
      'session_approval',
    ]);
    // A second decision on the same request changes nothing and grants nothing more.
    expect(rt.approvals.approveWithGrant(requested.approvalId, 'session', 'local:me')).toMatchObject({
      ok: false,
      reason: 'already_decided',
    });
    expect(runtimeInternals(rt).store.sessionApprovals.listActive('s2')).toHaveLength(1);
  });

  it('a session grant covers the agent it was given to: another agent of the same session still asks', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' }, other: { mode: 'ask' } } });
    const write = (id: string, path: string) => ({
      respond: { kind: 'calls' as const, calls: [{ id, tool: 'write_file', args: { path, content: id } }] },
    });
    const model = new ScriptedModel({
      worker: [write('w1', 'a.txt'), write('w2', 'b.txt'), { respond: { kind: 'final', text: 'ok' } }],
      other: [write('o1', 'c.txt'), { respond: { kind: 'final', text: 'ok' } }],
    });
    const events: RunFeedEvent[] = [];
    rt = await fx.start(model, { onRunEvent: (e) => events.push(e) });
    const first = await rt.runs.submit('worker', 'write', { sessionId: 'shared' });
    const asked = await eventually(
      () => events.find((e) => e.type === 'approval.requested' && e.runId === first),
      10_000,
      "the worker's approval request",
    );
    if (asked.type !== 'approval.requested') throw new Error('unreachable');
    expect(rt.approvals.approveWithGrant(asked.approvalId, 'session', 'local:me')).toMatchObject({
      ok: true,
    });
    expect(await rt.waitForRun(first)).toMatchObject({ status: 'completed' });
    expect(runtimeInternals(rt).store.sessionApprovals.listActive('shared')).toEqual([
      expect.objectContaining({ agentId: 'worker', tool: 'write_file', target: null }),
    ]);
    // The same session, another agent: the worker's grant does not cover it.
    const second = await rt.runs.submit('other', 'write', { sessionId: 'shared' });
    const otherAsked = await eventually(
      () => events.find((e) => e.type === 'approval.requested' && e.runId === second),
      10_000,
      "the other agent's approval request",
    );
    if (otherAsked.type !== 'approval.requested') throw new Error('unreachable');
    expect(otherAsked).toMatchObject({ tool: 'write_file', reason: 'mode_ask' });
    expect(rt.decide(otherAsked.approvalId, 'denied', 'local:me')).toMatchObject({ ok: true });
    expect(await rt.waitForRun(second)).toMatchObject({ status: expect.stringMatching(/completed|denied/) });
    const reasons = events
      .filter((e) => e.type === 'tool.decided')
      .map((e) =>
        e.type === 'tool.decided' ? `${e.runId === first ? 'worker' : 'other'}:${e.decision.reason}` : '',
      );
    expect(reasons).toEqual(['worker:mode_ask', 'worker:session_approval', 'other:mode_ask']);
  });
});
