// The provenance chain of a call whose run a cluster node took over (issue 37), built from that
// node's log (pure `buildProvenance`): the links recorded on the node it came from are read from
// the approval record brought in from the shared Inbox, and the chain closes only when this log
// holds the take-over, the decision, and a start whose arguments hash equals the approved one.
// Look-alikes that must not close: no take-over, no approval record, another hash, no decision,
// a denial, a take-over after the start.
import { describe, expect, it } from 'vitest';
import { buildProvenance, type ProvenanceSources } from '../../runtime/read/provenance.ts';
import type { ApprovalRecord, AuditEvent } from '../../store/index.ts';

const HASH = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

function event(seq: number, kind: string, fields: Partial<AuditEvent> = {}): AuditEvent {
  return {
    seq,
    v: 1,
    at: 1_000 + seq,
    kind: kind as AuditEvent['kind'],
    sessionId: null,
    agentId: 'worker',
    surface: null,
    runId: 'r1',
    callId: 'c1',
    tool: 'send_message',
    risk: null,
    ruleId: null,
    resource: null,
    status: null,
    standingApprovalId: null,
    detail: {},
    prevHash: '0'.repeat(64),
    hash: '0'.repeat(64),
    ...fields,
  };
}

const APPROVAL = {
  id: 'ap1',
  v: 2,
  kind: 'tool',
  callId: 'r1:c1',
  runId: 'r1',
  sessionId: 's',
  taskId: null,
  agentId: 'worker',
  parentAgentId: null,
  parentRunId: null,
  surface: null,
  tool: 'send_message',
  args: {},
  target: '#ops',
  risk: 'external',
  reason: 'policy',
  ruleId: 'ask.send_message',
  idempotencyKey: 'k',
  resumeCheckpoint: null,
  createdAt: 900,
  expiresAt: 99_000,
  status: 'approved',
  decidedBy: 'alice',
  decidedAt: 950,
  decisionReason: null,
  argsHash: HASH,
  policyHash: null,
  decidedSurface: 'cli',
  decidedNode: 'node-b',
} as unknown as ApprovalRecord;

const takenOver = event(10, 'run_taken_over', {
  callId: null,
  status: 'waiting_for_approval',
  detail: { from: 'node-a', why: 'decision', approvalId: 'ap1' },
});

/** This node's log of the call after it took the run over and ran it. */
function callEvents(ran = HASH, resolved = 'approved'): AuditEvent[] {
  return [
    event(11, 'approval_requested', { detail: { approvalId: 'ap1', argsHash: HASH } }),
    event(12, 'approval_resolved', { status: resolved, detail: { decidedBy: 'alice' } }),
    event(13, 'started', { detail: { argsHash: ran } }),
    event(14, 'completed', { status: 'ok' }),
  ];
}

function sources(over: Partial<ProvenanceSources> = {}): ProvenanceSources {
  return {
    runId: 'r1',
    callId: 'c1',
    events: callEvents(),
    approval: APPROVAL,
    grant: null,
    takenOver,
    verification: { ok: true, headSeq: 14 } as ProvenanceSources['verification'],
    ...over,
  };
}

describe('the chain of a call on a node that took its run over', () => {
  it('closes through the take-over; the earlier links name the node they were recorded on', () => {
    const p = buildProvenance(sources());
    expect(p.problems).toEqual([]);
    expect(p.closed).toBe(true);
    expect(p.tool).toBe('send_message');
    expect(p.steps.map((s) => [s.step, s.seq])).toEqual([
      ['proposed', null],
      ['decided', null],
      ['taken_over', 10],
      ['approval_requested', 11],
      ['approval_resolved', 12],
      ['arguments', null],
      ['started', 13],
      ['completed', 14],
    ]);
    expect(p.steps[1]?.facts).toMatchObject({
      decision: 'approval-required',
      rule: 'ask.send_message',
      recordedOn: 'node-a',
    });
    expect(p.steps.find((s) => s.step === 'approval_resolved')?.facts).toMatchObject({ node: 'node-b' });
  });

  it('with no request in this log either, the request comes from the record too (its hash binds)', () => {
    const p = buildProvenance(sources({ events: callEvents().slice(1) }));
    expect(p.closed).toBe(true);
    expect(p.steps.find((s) => s.step === 'approval_requested')).toMatchObject({
      seq: null,
      facts: { argsHash: HASH, recordedOn: 'node-a' },
    });
    const off = buildProvenance(sources({ events: callEvents(OTHER).slice(1) }));
    expect(off.closed).toBe(false);
    expect(off.problems).toContain('the arguments run are not shown hash-equal to the ones approved');
  });

  it.each([
    ['no take-over in this log', { takenOver: null }, 'no `proposed` event'],
    ['no approval record brought in', { approval: null }, 'no `proposed` event'],
    ['other arguments run than approved', { events: callEvents(OTHER) }, 'not shown hash-equal'],
    [
      'no decision recorded',
      { events: callEvents().filter((e) => e.kind !== 'approval_resolved') },
      'nothing records its decision',
    ],
    ['a denial, then a start', { events: callEvents(HASH, 'denied') }, 'without an approved approval'],
    [
      'no start',
      { events: callEvents().filter((e) => e.kind !== 'started' && e.kind !== 'completed') },
      'no `started` event',
    ],
    ['a take-over recorded after the start', { takenOver: { ...takenOver, seq: 20 } }, 'after this log'],
  ])('does not close: %s', (_, over, problem) => {
    const p = buildProvenance(sources(over as Partial<ProvenanceSources>));
    expect(p.closed).toBe(false);
    expect(p.problems.join('\n')).toContain(problem);
  });

  it('a call this node proposed itself keeps its own links, take-over or not', () => {
    const own = [
      event(5, 'proposed'),
      event(6, 'policy_decided', { status: 'approval-required', ruleId: 'ask.send_message' }),
      ...callEvents(),
    ];
    const p = buildProvenance(sources({ events: own }));
    expect(p.closed).toBe(true);
    expect(p.steps.map((s) => s.step)).not.toContain('taken_over');
    expect(p.steps[0]).toMatchObject({ step: 'proposed', seq: 5 });
  });
});
