import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor, openStore } from '../../store/index.ts';
import { approvalInput, openTemp, track } from './helpers.ts';
import { runs } from '../support/laws.ts';

describe('approvals and the Inbox', () => {
  it('stores every field of the approval record, redacted, and audits the request', () => {
    const { store, clock, redactor } = openTemp();
    redactor.registerSecret('deploy-key-98765');
    const input = approvalInput(1, clock.now, 60_000, {
      parentAgentId: 'planner',
      parentRunId: 'run-0',
      target: 'https://deploy.example.com/?token=abc',
      args: { command: 'deploy --key deploy-key-98765', password: 'p' },
      resumeCheckpoint: { runId: 'run-1', note: 'deploy-key-98765' },
    });
    const { created, approval } = store.approvals.create(input);
    expect(created).toBe(true);
    expect(approval).toEqual({
      id: 'appr-1',
      v: 2,
      kind: 'tool',
      callId: 'call-1',
      runId: 'run-1',
      sessionId: 'session-1',
      taskId: 'task-1',
      agentId: 'assistant',
      parentAgentId: 'planner',
      parentRunId: 'run-0',
      surface: 'scheduled',
      tool: 'shell',
      args: { command: 'deploy --key [REDACTED]', password: '[REDACTED]' },
      target: 'https://deploy.example.com/?token=[REDACTED]',
      risk: 'exec',
      reason: 'mode_ask',
      ruleId: 'mode.ask',
      idempotencyKey: 'idem-1',
      resumeCheckpoint: { runId: 'run-1', note: '[REDACTED]' },
      createdAt: clock.now,
      expiresAt: clock.now + 60_000,
      status: 'pending',
      decidedBy: null,
      decidedAt: null,
      decisionReason: null,
      argsHash: null,
      policyHash: null,
      decidedSurface: null,
      decidedNode: null,
    });
    expect(store.approvals.get('appr-1')).toEqual(approval);
    expect(store.approvals.getByCall('call-1')).toEqual(approval);
    expect(store.audit.list().map((e) => [e.kind, e.status, e.callId])).toEqual([
      ['approval_requested', 'pending', 'call-1'],
    ]);
  });

  it("withdraws only the ending run's pending requests, found through their own index", () => {
    const { store, clock } = openTemp();
    store.transaction(
      () => {
        for (let n = 1; n <= 50; n++)
          store.approvals.create(approvalInput(n, clock.now, 60_000, { runId: `run-${n % 5}` }));
      },
      { durable: true },
    );
    expect(store.approvals.decide('appr-5', 'approved', 'alice', clock.now + 1).ok).toBe(true);
    const withdrawn = store.approvals.withdrawForRun('run-0', 'run_ended');
    // run-0 holds appr-5, 10, …, 50; appr-5 was decided already, so 9 are withdrawn.
    expect(withdrawn.map((a) => a.id).sort()).toEqual(
      [10, 15, 20, 25, 30, 35, 40, 45, 50].map((n) => `appr-${n}`).sort(),
    );
    expect(store.approvals.get('appr-5')?.status).toBe('approved');
    expect(store.approvals.listPending().map((a) => a.runId)).not.toContain('run-0');
    expect(store.approvals.listPending()).toHaveLength(40);
    expect(store.approvals.withdrawForRun('run-0', 'run_ended')).toEqual([]);
    // The query of withdrawForRun (store/approvals/inbox.ts `pendingOfRun`) searches an index on
    // the run: before schema 10 it walked every pending approval of every run at each run's end.
    const plan = (
      store.connection
        .prepare(
          "EXPLAIN QUERY PLAN SELECT * FROM approvals WHERE status = 'pending' AND run_id = ? ORDER BY created_at, id",
        )
        .all('run-1') as Array<{ detail: string }>
    ).map((r) => r.detail);
    expect(plan.join('; ')).toMatch(/SEARCH approvals USING INDEX approvals_pending_run \(run_id=\?\)/);
  });

  it('lists pending approvals by session, task and agent through the expiry index, with no index of their own (schema 11)', () => {
    const { store, clock } = openTemp();
    for (let i = 1; i <= 12; i++)
      store.approvals.create(
        approvalInput(i, clock.now, 60_000, {
          sessionId: `s${i % 2}`,
          taskId: `t${i % 3}`,
          agentId: `a${i % 4}`,
        }),
      );
    const ids = (f: Parameters<typeof store.approvals.listPending>[0]) =>
      store.approvals.listPending(f).map((a) => a.id);
    const all = Array.from({ length: 12 }, (_, k) => `appr-${k + 1}`);
    expect(ids({ sessionId: 's1' })).toEqual(all.filter((_, k) => (k + 1) % 2 === 1));
    expect(ids({ taskId: 't0' })).toEqual(all.filter((_, k) => (k + 1) % 3 === 0));
    expect(ids({ agentId: 'a2', sessionId: 's0' })).toEqual(all.filter((_, k) => (k + 1) % 4 === 2));
    const plan = (filter: Record<string, string | null>) =>
      (
        store.connection
          .prepare(
            `EXPLAIN QUERY PLAN SELECT * FROM approvals WHERE status = 'pending'
               AND (@session IS NULL OR session_id = @session) AND (@task IS NULL OR task_id = @task)
               AND (@agent IS NULL OR agent_id = @agent) ORDER BY created_at, rowid`,
          )
          .all({ session: null, task: null, agent: null, ...filter }) as Array<{ detail: string }>
      )
        .map((r) => r.detail)
        .join('; ');
    const filters: Array<Record<string, string>> = [{}, { session: 's1' }, { task: 't1' }, { agent: 'a1' }];
    for (const filter of filters)
      expect(plan(filter), JSON.stringify(filter)).toMatch(/USING INDEX approvals_pending_expiry/);
    const indexes = (
      store.connection
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'approvals' ORDER BY name",
        )
        .all() as Array<{ name: string }>
    ).map((r) => r.name);
    expect(indexes).toEqual([
      'approvals_pending_expiry',
      'approvals_pending_run',
      'sqlite_autoindex_approvals_1',
      'sqlite_autoindex_approvals_2',
    ]);
  });

  it('returns the existing request for a call instead of a second one', () => {
    const { store, clock } = openTemp();
    store.approvals.create(approvalInput(1, clock.now));
    const again = store.approvals.create(approvalInput(1, clock.now, 60_000, { id: 'other-id' }));
    expect(again).toMatchObject({ created: false, approval: { id: 'appr-1' } });
    expect(store.audit.list()).toHaveLength(1);
  });

  it('refuses a deadline before creation and unknown reason codes', () => {
    const { store, clock } = openTemp();
    expect(() => store.approvals.create(approvalInput(1, clock.now, -1))).toThrow(/expiresAt/);
    expect(() =>
      store.approvals.create(approvalInput(1, clock.now, 10, { reason: 'because' as 'mode_ask' })),
    ).toThrow(/reason/);
  });

  it('accepts one decision and refuses every later one with the reason', () => {
    const { store, clock } = openTemp();
    store.approvals.create(approvalInput(1, clock.now));
    const win = store.approvals.decide('appr-1', 'approved', 'alice', clock.now + 10);
    expect(win).toMatchObject({
      ok: true,
      approval: { status: 'approved', decidedBy: 'alice', decidedAt: clock.now + 10 },
    });
    const second = store.approvals.decide('appr-1', 'denied', 'bob', clock.now + 20);
    expect(second).toMatchObject({ ok: false, reason: 'already_decided', approval: { status: 'approved' } });
    expect(second.ok === false && second.message).toMatch(/already approved by alice/);
    expect(store.approvals.decide('missing', 'approved', 'alice', clock.now)).toMatchObject({
      ok: false,
      reason: 'not_found',
      approval: null,
    });
    const resolved = store.audit.list().filter((e) => e.kind === 'approval_resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({
      status: 'approved',
      detail: { decidedBy: 'alice', approvalId: 'appr-1' },
    });
  });

  it('stores a decision reason redacted, audits it, and refuses an empty or oversized one', () => {
    const { store, clock, redactor } = openTemp();
    redactor.registerSecret('hunter2-secret');
    store.approvals.create(approvalInput(1, clock.now, 60_000));
    expect(() => store.approvals.decide('appr-1', 'denied', 'local:u', clock.now, '')).toThrow(/reason/);
    expect(() => store.approvals.decide('appr-1', 'denied', 'local:u', clock.now, 'x'.repeat(1001))).toThrow(
      /reason/,
    );
    expect(store.approvals.get('appr-1')?.status).toBe('pending');
    const r = store.approvals.decide('appr-1', 'denied', 'local:u', clock.now, 'not with hunter2-secret');
    expect(r.ok && r.approval.decisionReason).toBe('not with [REDACTED]');
    expect(store.approvals.get('appr-1')?.decisionReason).toBe('not with [REDACTED]');
    const resolved = store.audit.list().find((e) => e.kind === 'approval_resolved');
    expect(JSON.stringify(resolved)).toContain('not with [REDACTED]');
    expect(JSON.stringify(store.audit.list())).not.toContain('hunter2');
  });

  it('refuses a decision at or after the deadline and marks the request expired', () => {
    const { store, clock } = openTemp();
    store.approvals.create(approvalInput(1, clock.now, 1000));
    const late = store.approvals.decide('appr-1', 'approved', 'alice', clock.now + 1000);
    expect(late).toMatchObject({ ok: false, reason: 'expired', approval: { status: 'expired' } });
    expect(store.approvals.decide('appr-1', 'approved', 'alice', clock.now + 10)).toMatchObject({
      ok: false,
      reason: 'expired',
    });
    expect(store.audit.list().map((e) => [e.kind, e.status])).toEqual([
      ['approval_requested', 'pending'],
      ['approval_resolved', 'expired'],
    ]);
  });

  it('expires due requests as data, audited, and lists pending ones by session, task and agent', () => {
    const { store, clock } = openTemp();
    const t = clock.now;
    store.approvals.create(approvalInput(1, t, 1000, { sessionId: 's-a', taskId: 'task-x', agentId: 'a1' }));
    store.approvals.create(
      approvalInput(2, t + 1, 5000, { sessionId: 's-a', taskId: 'task-y', agentId: 'a2' }),
    );
    store.approvals.create(
      approvalInput(3, t + 2, 5000, { sessionId: 's-b', taskId: 'task-x', agentId: 'a2' }),
    );
    const ids = (list: Array<{ id: string }>) => list.map((a) => a.id);
    expect(ids(store.approvals.listPending())).toEqual(['appr-1', 'appr-2', 'appr-3']);
    expect(ids(store.approvals.listPending({ sessionId: 's-a' }))).toEqual(['appr-1', 'appr-2']);
    expect(ids(store.approvals.listPending({ taskId: 'task-x' }))).toEqual(['appr-1', 'appr-3']);
    expect(ids(store.approvals.listPending({ agentId: 'a2', sessionId: 's-b' }))).toEqual(['appr-3']);

    expect(ids(store.approvals.expireDue(t + 999))).toEqual([]);
    expect(ids(store.approvals.expireDue(t + 1000))).toEqual(['appr-1']);
    expect(ids(store.approvals.listPending({ taskId: 'task-x' }))).toEqual(['appr-3']);
    expect(store.approvals.get('appr-1')).toMatchObject({
      status: 'expired',
      decidedAt: t + 1000,
      decidedBy: null,
    });
  });

  it('keeps a decided approval final at the database level', () => {
    const { store, clock } = openTemp();
    store.approvals.create(approvalInput(1, clock.now));
    store.approvals.decide('appr-1', 'denied', 'alice', clock.now + 1);
    expect(() => store.connection.prepare("UPDATE approvals SET status = 'approved'").run()).toThrow(/final/);
  });

  it('has exactly one winner among repeated decisions in any order and at any time', () => {
    const attempt = fc.record({
      decision: fc.constantFrom('approved' as const, 'denied' as const),
      user: fc.constantFrom('alice', 'bob', 'carol'),
      offset: fc.integer({ min: 0, max: 2000 }),
    });
    fc.assert(
      fc.property(fc.array(attempt, { minLength: 1, maxLength: 12 }), (attempts) => {
        const { store, clock } = openTemp();
        const ttl = 1000;
        store.approvals.create(approvalInput(1, clock.now, ttl));
        const results = attempts.map((a) =>
          store.approvals.decide('appr-1', a.decision, a.user, clock.now + a.offset),
        );
        const winners = results.filter((r) => r.ok);
        const firstInTime = attempts.findIndex((a) => a.offset < ttl);
        const expiredFirst = attempts.findIndex((a) => a.offset >= ttl);
        const shouldWin = firstInTime !== -1 && (expiredFirst === -1 || firstInTime < expiredFirst);
        expect(winners).toHaveLength(shouldWin ? 1 : 0);
        if (shouldWin) expect(results[firstInTime]?.ok).toBe(true);
        const resolved = store.audit.list().filter((e) => e.kind === 'approval_resolved');
        expect(resolved).toHaveLength(1);
        store.close();
      }),
      { numRuns: runs(60) },
    );
  });

  it('has exactly one winner across two connections to the same file', () => {
    const { store, path, clock } = openTemp();
    const other = track(openStore({ path, redactor: new Redactor(), clock: clock.read }));
    for (let i = 0; i < 20; i++) {
      store.approvals.create(approvalInput(i, clock.now));
      const a = store.approvals.decide(`appr-${i}`, 'approved', 'alice', clock.now + 1);
      const b = other.approvals.decide(`appr-${i}`, 'denied', 'bob', clock.now + 1);
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      expect([first.ok, second.ok].filter(Boolean)).toHaveLength(1);
    }
    expect(store.audit.verifyChain()).toMatchObject({ ok: true, count: 40 });
  });
});
