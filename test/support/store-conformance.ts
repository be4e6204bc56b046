/**
 * The storage conformance spec (issue 30; the habit of LangGraph's checkpoint-validation): the
 * part of the Inbox that the SQLite store and the cluster's JetStream mirror both keep
 * (`InboxBackend`, store/approvals/inbox-backend.ts), written once and run against every backend.
 * `makeBackend` may hand every test the same backend: each test uses ids of its own.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalRecord, DecideResult, InboxBackend } from '../../store/index.ts';
import { APPROVAL_RECORD_VERSION } from '../../store/approvals/types.ts';
import { runs } from './laws.ts';

const T0 = 1_700_000_000_000;
const TTL = 60_000;

/** A pending request of a tool call, as a run opens it. */
export function pendingRequest(id: string, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id,
    v: APPROVAL_RECORD_VERSION,
    kind: 'tool',
    callId: `call-${id}`,
    runId: `worker:${id}`,
    sessionId: 'sess-1',
    taskId: 'nightly',
    agentId: 'worker',
    parentAgentId: null,
    parentRunId: null,
    surface: 'scheduled',
    tool: 'write_file',
    args: { path: 'notes/today.md', content: 'hello' },
    target: '/work/notes/today.md',
    risk: 'write-local',
    reason: 'mode_ask',
    ruleId: 'mode',
    idempotencyKey: `call:worker:${id}:c1`,
    resumeCheckpoint: null,
    createdAt: T0,
    expiresAt: T0 + TTL,
    status: 'pending',
    decidedBy: null,
    decidedAt: null,
    decisionReason: null,
    argsHash: null,
    policyHash: null,
    decidedSurface: null,
    decidedNode: null,
    ...overrides,
  };
}

/** What a request holds from its opening on, whatever happens to it. */
function requestFields(a: ApprovalRecord): Partial<ApprovalRecord> {
  const {
    status: _s,
    decidedBy: _b,
    decidedAt: _a,
    decisionReason: _r,
    decidedSurface: _ds,
    decidedNode: _dn,
    ...rest
  } = a;
  return rest;
}

/** One attempt of the law: who decides what, how long after the previous attempt. */
interface Attempt {
  readonly decision: ApprovalDecision;
  readonly user: string;
  readonly after: number;
}

/** What the spec expects of a sequence of attempts on one fresh request (time only moves on). */
function expected(attempts: readonly Attempt[], expiresAt: number): Array<DecideResult['ok'] | 'expired'> {
  let state: 'pending' | 'decided' | 'expired' = 'pending';
  let now = T0;
  return attempts.map((a) => {
    now += a.after;
    if (state === 'decided') return false;
    if (state === 'expired') return 'expired';
    state = now >= expiresAt ? 'expired' : 'decided';
    return state === 'decided' ? true : 'expired';
  });
}

/**
 * Runs the Inbox conformance spec against one backend. `makeBackend` is called once per test.
 */
export function describeStoreConformance(
  name: string,
  makeBackend: () => InboxBackend | Promise<InboxBackend>,
): void {
  const fresh = (): string => `ap-${randomUUID()}`;

  describe(`store conformance: the Inbox on ${name}`, () => {
    it('opens a pending request and reads back every field it was opened with', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      const request = pendingRequest(id);
      expect(await inbox.open(request)).toEqual(request);
      expect(await inbox.get(id)).toEqual(request);
      expect(await inbox.get(`${id}-other`)).toBeNull();
    });

    it('opening again changes nothing, and never reopens a decided or an expired request', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      await inbox.open(pendingRequest(id));
      expect((await inbox.open(pendingRequest(id))).status).toBe('pending');
      expect(await inbox.decide(id, 'denied', 'alice', T0 + 1, 'not that file')).toMatchObject({ ok: true });
      // A retried publish after the decision (a node publishing for a dead one): still denied.
      const again = await inbox.open(pendingRequest(id));
      expect(again).toMatchObject({ status: 'denied', decidedBy: 'alice', decisionReason: 'not that file' });
      expect(await inbox.decide(id, 'approved', 'mallory', T0 + 2)).toMatchObject({
        ok: false,
        reason: 'already_decided',
      });

      const late = fresh();
      await inbox.open(pendingRequest(late));
      expect(await inbox.decide(late, 'approved', 'alice', T0 + TTL)).toMatchObject({ reason: 'expired' });
      expect((await inbox.open(pendingRequest(late))).status).toBe('expired');
      expect(await inbox.decide(late, 'approved', 'alice', T0 + 1)).toMatchObject({ reason: 'expired' });
    });

    it('a decision is single use: the second, whoever makes it and whatever it says, changes nothing', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      await inbox.open(pendingRequest(id));
      const first = await inbox.decide(id, 'approved', 'alice', T0 + 10, 'fine');
      // Which surface a decision came through is the backend's own record (the store derives it
      // from the user's prefix), not part of this contract.
      const surfaceless = (r: DecideResult) =>
        r.ok ? { ...r, approval: { ...r.approval, decidedSurface: null } } : r;
      expect(surfaceless(first)).toEqual({
        ok: true,
        approval: {
          ...pendingRequest(id),
          status: 'approved',
          decidedBy: 'alice',
          decidedAt: T0 + 10,
          decisionReason: 'fine',
        },
      });
      // Evasion variants: another user, the same user again (either decision), a user name that
      // differs only in case, later or at the very same moment.
      const variants: Array<[ApprovalDecision, string, number]> = [
        ['denied', 'mallory', T0 + 11],
        ['denied', 'alice', T0 + 12],
        ['approved', 'alice', T0 + 13],
        ['approved', 'Alice', T0 + 10],
        ['denied', 'mallory', T0 + 10],
      ];
      for (const [decision, user, now] of variants) {
        const r = await inbox.decide(id, decision, user, now);
        expect(r, `${decision} by ${user} at +${now - T0}`).toMatchObject({
          ok: false,
          reason: 'already_decided',
        });
        if (!r.ok) {
          expect(r.message).toContain('alice');
          expect(r.approval).toMatchObject({ status: 'approved', decidedBy: 'alice' });
        }
      }
      expect(await inbox.get(id)).toMatchObject({
        status: 'approved',
        decidedBy: 'alice',
        decidedAt: T0 + 10,
      });
    });

    it('ids are exact: a look-alike id is another request (or none), decided on its own', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      const lookAlike = id.toUpperCase();
      await inbox.open(pendingRequest(id));
      await inbox.open(pendingRequest(lookAlike));
      expect(await inbox.decide(id, 'approved', 'alice', T0 + 1)).toMatchObject({ ok: true });
      expect(await inbox.decide(lookAlike, 'denied', 'bob', T0 + 2)).toMatchObject({ ok: true });
      for (const absent of [`${id} `, ` ${id}`, `${id}\u0000`, id.slice(0, -1)]) {
        expect(await inbox.decide(absent, 'approved', 'alice', T0 + 3), JSON.stringify(absent)).toEqual({
          ok: false,
          reason: 'not_found',
          message: expect.stringContaining('no approval request'),
          approval: null,
        });
      }
      expect(await inbox.get(id)).toMatchObject({ status: 'approved', decidedBy: 'alice' });
      expect(await inbox.get(lookAlike)).toMatchObject({ status: 'denied', decidedBy: 'bob' });
    });

    it('the deadline: one ms before it decides, at it the request expires and stays expired', async () => {
      const inbox = await makeBackend();
      const before = fresh();
      const at = fresh();
      await inbox.open(pendingRequest(before));
      await inbox.open(pendingRequest(at));
      expect(await inbox.decide(before, 'approved', 'alice', T0 + TTL - 1)).toMatchObject({ ok: true });
      const expired = await inbox.decide(at, 'approved', 'alice', T0 + TTL);
      expect(expired).toMatchObject({ ok: false, reason: 'expired', approval: { status: 'expired' } });
      if (!expired.ok) expect(expired.message).toContain('expired');
      expect(await inbox.decide(at, 'denied', 'bob', T0 + TTL + 1)).toMatchObject({ reason: 'expired' });
      expect(await inbox.get(at)).toMatchObject({ status: 'expired', decidedBy: null });
    });

    it('a decision with bad input is refused with an error naming the input, and changes nothing', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      await inbox.open(pendingRequest(id));
      const refused: Array<[string, () => Promise<DecideResult>, RegExp]> = [
        ['an empty user', () => inbox.decide(id, 'approved', '', T0 + 1), /decide user/],
        ['an empty reason', () => inbox.decide(id, 'denied', 'alice', T0 + 1, ''), /decide reason/],
        [
          'a reason of 1,001 characters',
          () => inbox.decide(id, 'approved', 'alice', T0 + 1, 'x'.repeat(1001)),
          /decide reason/,
        ],
        [
          'a decision that is neither',
          () => inbox.decide(id, 'Approved' as ApprovalDecision, 'alice', T0 + 1),
          /decide decision/,
        ],
        ['a time that is not one', () => inbox.decide(id, 'approved', 'alice', Number.NaN), /decide now/],
      ];
      for (const [what, call, names] of refused) {
        await expect(call(), what).rejects.toMatchObject({
          code: 'invalid_input',
          message: expect.stringMatching(names),
        });
        expect(await inbox.get(id), what).toMatchObject({ status: 'pending', decidedBy: null });
      }
      // The look-alike that is fine: a reason of exactly 1,000 characters is kept whole.
      const r = await inbox.decide(id, 'denied', 'alice', T0 + 2, 'y'.repeat(1000));
      expect(r).toMatchObject({ ok: true, approval: { decisionReason: 'y'.repeat(1000) } });
    });

    it('decisions made at once: exactly one wins', async () => {
      const inbox = await makeBackend();
      const id = fresh();
      await inbox.open(pendingRequest(id));
      const results = await Promise.all(
        ['u1', 'u2', 'u3', 'u4', 'u5', 'u6'].map((user, i) =>
          inbox.decide(id, i % 2 === 0 ? 'approved' : 'denied', user, T0 + 5 + i),
        ),
      );
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ reason: 'already_decided' });
      expect((await inbox.get(id))?.decidedBy).toBe(winners[0]?.approval?.decidedBy);
    });

    it('law: whatever the attempts, at most one decision wins, the first before the deadline', async () => {
      const inbox = await makeBackend();
      const attempt = fc.record({
        decision: fc.constantFrom<ApprovalDecision>('approved', 'denied'),
        user: fc.constantFrom('alice', 'bob', 'Alice', 'mallory'),
        // Time only moves on (a retry of one decision at the very same moment is not a new one).
        after: fc.integer({ min: 1, max: 40_000 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 5 }), async (attempts) => {
          const id = fresh();
          const request = pendingRequest(id);
          await inbox.open(request);
          const want = expected(attempts, request.expiresAt);
          let now = T0;
          let winner: Attempt | null = null;
          for (const [i, a] of attempts.entries()) {
            now += a.after;
            const r = await inbox.decide(id, a.decision, a.user, now);
            expect(r.ok ? true : r.reason === 'expired' ? 'expired' : false, `attempt ${i}`).toBe(want[i]);
            if (r.ok) winner = a;
          }
          const stored = await inbox.get(id);
          expect(stored).toMatchObject(requestFields(request));
          if (winner === null) expect(stored?.status).toBe(want.includes('expired') ? 'expired' : 'pending');
          else expect(stored).toMatchObject({ status: winner.decision, decidedBy: winner.user });
        }),
        { numRuns: runs(20) },
      );
    });
  });
}
