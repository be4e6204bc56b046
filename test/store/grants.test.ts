import { describe, expect, it } from 'vitest';
import { openTemp } from './helpers.ts';

describe('session approvals', () => {
  it('belong to one session, match exact or any target, and are audited', () => {
    const { store, clock } = openTemp();
    const exact = store.sessionApprovals.grant({
      id: 'sa-1',
      sessionId: 's-1',
      tool: 'write_file',
      target: '/w/a.txt',
      grantedBy: 'alice',
      agentId: 'assistant',
      runId: 'run-1',
    });
    expect(exact).toEqual({
      id: 'sa-1',
      sessionId: 's-1',
      agentId: 'assistant',
      tool: 'write_file',
      target: '/w/a.txt',
      grantedBy: 'alice',
      createdAt: clock.now,
      revokedAt: null,
      revokedBy: null,
    });
    const any = store.sessionApprovals.grant({
      sessionId: 's-1',
      tool: 'read_file',
      grantedBy: 'alice',
      agentId: 'assistant',
    });
    expect(any.target).toBeNull();

    expect(store.sessionApprovals.find('s-1', 'assistant', 'write_file', '/w/a.txt')?.id).toBe('sa-1');
    expect(store.sessionApprovals.find('s-1', 'assistant', 'write_file', '/w/b.txt')).toBeNull();
    expect(store.sessionApprovals.find('s-1', 'assistant', 'read_file', '/anything')?.id).toBe(any.id);
    expect(store.sessionApprovals.find('s-2', 'assistant', 'read_file', '/anything')).toBeNull();
    expect(store.sessionApprovals.listActive('s-1').map((g) => g.id)).toEqual(['sa-1', any.id]);
    expect(store.sessionApprovals.listActiveFor('s-1', 'assistant').map((g) => g.id)).toEqual([
      'sa-1',
      any.id,
    ]);

    const events = store.audit.list();
    expect(events.map((e) => [e.kind, e.sessionId, e.tool, e.resource])).toEqual([
      ['session_approval_granted', 's-1', 'write_file', '/w/a.txt'],
      ['session_approval_granted', 's-1', 'read_file', null],
    ]);
    expect(events[0]).toMatchObject({ agentId: 'assistant', runId: 'run-1', detail: { grantedBy: 'alice' } });
  });

  it("cover only the calls of the agent they were given to, never another agent's in the same session", () => {
    const { store } = openTemp();
    store.sessionApprovals.grant({
      id: 'g-a',
      sessionId: 's-1',
      tool: 'write_file',
      grantedBy: 'alice',
      agentId: 'writer',
    });
    // A grant without an agent (an older row, or a caller that named none) covers nobody.
    store.sessionApprovals.grant({ id: 'g-none', sessionId: 's-1', tool: 'shell', grantedBy: 'alice' });
    expect(store.sessionApprovals.find('s-1', 'writer', 'write_file', '/w/x')?.id).toBe('g-a');
    expect(store.sessionApprovals.find('s-1', 'other', 'write_file', '/w/x')).toBeNull();
    expect(store.sessionApprovals.find('s-1', 'writer', 'shell', null)).toBeNull();
    expect(store.sessionApprovals.listActiveFor('s-1', 'other')).toEqual([]);
    expect(store.sessionApprovals.listActiveFor('s-1', 'writer').map((g) => g.id)).toEqual(['g-a']);
    // Listed and audited as given, with its agent.
    expect(store.sessionApprovals.listActive('s-1').map((g) => [g.id, g.agentId])).toEqual([
      ['g-a', 'writer'],
      ['g-none', null],
    ]);
  });

  it('are revocable once, audited', () => {
    const { store, clock } = openTemp();
    store.sessionApprovals.grant({
      id: 'sa-1',
      sessionId: 's-1',
      tool: 'shell',
      grantedBy: 'alice',
      agentId: 'a',
    });
    expect(store.sessionApprovals.find('s-1', 'a', 'shell', null)?.id).toBe('sa-1');
    clock.advance(500);
    const revoked = store.sessionApprovals.revoke('sa-1', { revokedBy: 'bob' });
    expect(revoked).toMatchObject({ revokedAt: clock.now, revokedBy: 'bob' });
    expect(store.sessionApprovals.find('s-1', 'a', 'shell', null)).toBeNull();
    expect(store.sessionApprovals.get('sa-1')).toEqual(revoked);
    expect(() => store.sessionApprovals.revoke('sa-1', { revokedBy: 'bob' })).toThrow(
      expect.objectContaining({ code: 'grant_already_revoked' }),
    );
    expect(() => store.sessionApprovals.revoke('sa-x', { revokedBy: 'bob' })).toThrow(
      expect.objectContaining({ code: 'grant_not_found' }),
    );
    expect(store.audit.list().map((e) => e.kind)).toEqual([
      'session_approval_granted',
      'session_approval_revoked',
    ]);
  });
});

describe('standing approvals', () => {
  it('bind one task to one exact tool and target, and are audited with their id', () => {
    const { store } = openTemp();
    const grant = store.standingApprovals.grant({
      id: 'st-1',
      ownerTaskId: 'nightly-report',
      tool: 'send_message',
      target: '#reports',
      grantedBy: 'alice',
    });
    expect(grant).toMatchObject({
      ownerTaskId: 'nightly-report',
      tool: 'send_message',
      target: '#reports',
      revokedAt: null,
    });
    expect(store.standingApprovals.find('nightly-report', 'send_message', '#reports')?.id).toBe('st-1');
    expect(store.standingApprovals.find('nightly-report', 'send_message', '#general')).toBeNull();
    expect(store.standingApprovals.find('other-task', 'send_message', '#reports')).toBeNull();
    expect(store.standingApprovals.find('nightly-report', 'http_request', '#reports')).toBeNull();
    expect(store.audit.list()[0]).toMatchObject({
      kind: 'standing_approval_granted',
      standingApprovalId: 'st-1',
      tool: 'send_message',
      resource: '#reports',
      detail: { ownerTaskId: 'nightly-report', grantedBy: 'alice' },
    });
  });

  it('require a target and are revocable, audited', () => {
    const { store } = openTemp();
    expect(() =>
      store.standingApprovals.grant({
        ownerTaskId: 't',
        tool: 'send_message',
        target: '',
        grantedBy: 'alice',
      }),
    ).toThrow(/target/);
    const grant = store.standingApprovals.grant({
      ownerTaskId: 't',
      tool: 'http_request',
      target: 'https://x/',
      grantedBy: 'a',
    });
    store.standingApprovals.revoke(grant.id, { revokedBy: 'a' });
    expect(store.standingApprovals.listActive('t')).toEqual([]);
    expect(store.standingApprovals.find('t', 'http_request', 'https://x/')).toBeNull();
    expect(store.audit.list().map((e) => [e.kind, e.standingApprovalId])).toEqual([
      ['standing_approval_granted', grant.id],
      ['standing_approval_revoked', grant.id],
    ]);
  });

  it('are durable writes: refused inside a non-durable transaction', () => {
    const { store } = openTemp();
    expect(() =>
      store.transaction(() =>
        store.standingApprovals.grant({
          ownerTaskId: 't',
          tool: 'http_request',
          target: 'https://x/',
          grantedBy: 'a',
        }),
      ),
    ).toThrow(expect.objectContaining({ code: 'durability_mismatch' }));
    expect(store.audit.head()).toBeNull();
  });
});
