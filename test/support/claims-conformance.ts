/**
 * The storage conformance spec of "execute once" (issue 30; the habit of LangGraph's
 * checkpoint-validation): what the SQLite ledger and the cluster's claims bucket both keep
 * (`ClaimBackend`, store/ledger/claim-backend.ts), written once and run against every backend.
 * Each test uses keys of its own, so `makeBackend` may hand every test the same backend.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClaimBackend, ClaimCall, ClaimState } from '../../store/index.ts';
import { runs } from './laws.ts';

/** A backend under test, with what its own way of losing a claim's holder is. */
export interface ClaimsUnderTest {
  readonly backend: ClaimBackend;
  /**
   * The holder of an unfinished claim died: what the backend makes of that (the ledger marks the
   * run's started calls interrupted at restore; on the cluster a started claim simply stays).
   */
  abandon(key: string, call: ClaimCall): Promise<void>;
}

/** A fresh key and the call it is claimed for. */
function freshCall(): { key: string; call: ClaimCall } {
  const id = randomUUID();
  return {
    key: `call:worker:${id}:c1`,
    call: { runId: `worker:${id}`, callId: `c1-${id}`, tool: 'send_email' },
  };
}

type Op =
  | { readonly op: 'claim' }
  | { readonly op: 'settle'; readonly status: 'completed' | 'failed'; readonly value: number }
  | { readonly op: 'takeOver' }
  | { readonly op: 'stale' };

type Model =
  | { readonly status: 'none' }
  | { readonly status: 'unfinished'; readonly attempt: number }
  | { readonly status: 'completed' | 'failed'; readonly stored: unknown };

function outcomeOf(m: Model): ClaimState {
  if (m.status === 'unfinished') return { state: 'taken', attempt: m.attempt };
  if (m.status === 'none') throw new Error('no claim');
  return { state: m.status, stored: m.stored };
}

/** Runs the claims conformance spec against one backend. */
export function describeClaimsConformance(
  name: string,
  makeBackend: () => ClaimsUnderTest | Promise<ClaimsUnderTest>,
): void {
  describe(`store conformance: call claims on ${name}`, () => {
    it('the first claim of a key wins; every later one, whoever makes it, finds it taken', async () => {
      const { backend } = await makeBackend();
      const { key, call } = freshCall();
      expect(await backend.get(key)).toBeNull();
      expect(await backend.claim(key, call)).toEqual({ state: 'claimed' });
      expect(await backend.get(key)).toEqual({ status: 'unfinished', attempt: 1, stored: null });
      // The same call again (a replay), and another run or call naming the same key.
      for (const again of [
        call,
        { ...call, runId: 'other:run' },
        { ...call, callId: 'c2', tool: 'write_file' },
      ]) {
        expect(await backend.claim(key, again), JSON.stringify(again)).toEqual({
          state: 'taken',
          attempt: 1,
        });
      }
    });

    it('the first outcome is kept: later settles change nothing, and every later claim reuses it', async () => {
      const { backend } = await makeBackend();
      const { key, call } = freshCall();
      await backend.claim(key, call);
      await backend.settle(key, 'completed', { sent: 1 });
      await backend.settle(key, 'failed', { error: 'late' });
      await backend.settle(key, 'completed', { sent: 2 });
      expect(await backend.claim(key, call)).toEqual({ state: 'completed', stored: { sent: 1 } });
      expect(await backend.get(key)).toEqual({ status: 'completed', attempt: 1, stored: { sent: 1 } });

      const failing = freshCall();
      await backend.claim(failing.key, failing.call);
      await backend.settle(failing.key, 'failed', { error: 'smtp refused' });
      await backend.settle(failing.key, 'completed', { sent: 1 });
      expect(await backend.claim(failing.key, failing.call)).toEqual({
        state: 'failed',
        stored: { error: 'smtp refused' },
      });
      // A settle of a key never claimed claims nothing.
      const never = freshCall();
      await backend.settle(never.key, 'completed', { sent: 1 });
      expect(await backend.get(never.key)).toBeNull();
      expect(await backend.claim(never.key, never.call)).toEqual({ state: 'claimed' });
    });

    it('keys are exact: a look-alike key is another claim, claimed and settled on its own', async () => {
      const { backend } = await makeBackend();
      const { key, call } = freshCall();
      await backend.claim(key, call);
      await backend.settle(key, 'completed', { sent: 1 });
      for (const lookAlike of [key.toUpperCase(), `${key} `, ` ${key}`, `${key}\u0000`, key.slice(0, -1)]) {
        const what = JSON.stringify(lookAlike);
        expect(await backend.get(lookAlike), what).toBeNull();
        expect(await backend.claim(lookAlike, call), what).toEqual({ state: 'claimed' });
        await backend.settle(lookAlike, 'failed', { error: what });
      }
      expect(await backend.get(key)).toEqual({ status: 'completed', attempt: 1, stored: { sent: 1 } });
      expect(await backend.claim(key.toUpperCase(), call)).toEqual({
        state: 'failed',
        stored: { error: JSON.stringify(key.toUpperCase()) },
      });
    });

    it('claims made at once: exactly one wins', async () => {
      const { backend } = await makeBackend();
      const { key, call } = freshCall();
      const results = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((i) => backend.claim(key, { ...call, callId: `${call.callId}-${i}` })),
      );
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      for (const r of results.filter((x) => x.state !== 'claimed'))
        expect(r).toEqual({ state: 'taken', attempt: 1 });
    });

    it('an abandoned claim is taken again by exactly one, once per attempt', async () => {
      const { backend, abandon } = await makeBackend();
      const { key, call } = freshCall();
      await backend.claim(key, call);
      await abandon(key, call);
      expect(await backend.claim(key, call)).toEqual({ state: 'taken', attempt: 1 });
      const results = await Promise.all([1, 2, 3, 4].map(() => backend.retake(key, 1)));
      expect(results.filter((r) => r.state === 'claimed')).toHaveLength(1);
      for (const r of results.filter((x) => x.state !== 'claimed'))
        expect(r).toEqual({ state: 'taken', attempt: 2 });
      expect(await backend.get(key)).toEqual({ status: 'unfinished', attempt: 2, stored: null });
      // A stale attempt number (a node that saw attempt 1) takes nothing.
      expect(await backend.retake(key, 1)).toEqual({ state: 'taken', attempt: 2 });
      await backend.settle(key, 'completed', { sent: 1 });
      // A settled claim is never taken again, at any attempt.
      await abandon(key, call);
      for (const attempt of [1, 2, 3]) {
        expect(await backend.retake(key, attempt), `attempt ${attempt}`).toEqual({
          state: 'completed',
          stored: { sent: 1 },
        });
      }
    });

    it('a claim with bad input is refused with an error naming the input, and claims nothing', async () => {
      const { backend } = await makeBackend();
      const { key, call } = freshCall();
      const refused: Array<[string, string, ClaimCall, RegExp]> = [
        ['an empty idempotency key', '', call, /idempotencyKey/],
        ['an empty call id', key, { ...call, callId: '' }, /callId/],
        ['an empty run id', key, { ...call, runId: '' }, /runId/],
        ['an empty tool', key, { ...call, tool: '' }, /tool/],
      ];
      for (const [what, k, c, names] of refused) {
        await expect(backend.claim(k, c), what).rejects.toThrow(names);
        expect(await backend.get(k), what).toBeNull();
      }
      // The look-alikes that are fine: the same call whole, under a new key and under its own.
      expect(await backend.claim(`k-${randomUUID()}`, call)).toEqual({ state: 'claimed' });
      expect(await backend.claim(key, call)).toEqual({ state: 'claimed' });
    });

    it('law: whatever happens to a key, one claim per attempt wins and the first outcome stays', async () => {
      const { backend, abandon } = await makeBackend();
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.constant<Op>({ op: 'claim' }),
        fc.record({
          op: fc.constant('settle' as const),
          status: fc.constantFrom('completed', 'failed'),
          value: fc.nat(99),
        }),
        fc.constant<Op>({ op: 'takeOver' }),
        fc.constant<Op>({ op: 'stale' }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
          const { key, call } = freshCall();
          let model: Model = { status: 'none' };
          for (const [i, o] of ops.entries()) {
            const at = `step ${i} (${o.op})`;
            if (o.op === 'claim') {
              const want: ClaimState = model.status === 'none' ? { state: 'claimed' } : outcomeOf(model);
              expect(await backend.claim(key, call), at).toEqual(want);
              if (model.status === 'none') model = { status: 'unfinished', attempt: 1 };
            } else if (o.op === 'settle') {
              await backend.settle(key, o.status, { value: o.value });
              if (model.status === 'unfinished') model = { status: o.status, stored: { value: o.value } };
            } else if (model.status !== 'none') {
              // takeOver: the holder dies and another takes the claim at the attempt it sees;
              // stale: a retake naming an attempt that is not the current one.
              const current: number = model.status === 'unfinished' ? model.attempt : 1;
              if (o.op === 'takeOver') await abandon(key, call);
              const r = await backend.retake(key, o.op === 'takeOver' ? current : current + 1);
              if (o.op === 'takeOver' && model.status === 'unfinished') {
                expect(r, at).toEqual({ state: 'claimed' });
                model = { status: 'unfinished', attempt: current + 1 };
              } else {
                expect(r, at).toEqual(outcomeOf(model));
              }
            }
          }
          const stored = await backend.get(key);
          if (model.status === 'none') expect(stored).toBeNull();
          else if (model.status === 'unfinished')
            expect(stored).toEqual({ status: 'unfinished', attempt: model.attempt, stored: null });
          else expect(stored).toMatchObject({ status: model.status, stored: model.stored });
        }),
        { numRuns: runs(15) },
      );
    });
  });
}
