import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  agentGrant,
  childGrant,
  covers,
  grantAllows,
  loadOrCreateBusAuthKeys,
  matches,
  overlaps,
  SEEDS_FILE,
  type ActorScope,
  type BusGrant,
} from '../../runtime/bus/auth/index.ts';
import { runs } from '../support/laws.ts';

const TOKENS = ['snotra', 'v1', 'agent', 'a', 'b', 'child', 'k1', 'k2', 'd_k1', '_INBOX', 'approval', 'x'];
const token = fc.constantFrom(...TOKENS);
const concrete = fc.array(token, { minLength: 1, maxLength: 7 }).map((t) => t.join('.'));
const pattern = fc
  .tuple(fc.array(fc.oneof(token, fc.constant('*')), { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([t, rest]) => (rest ? [...t, '>'] : t).join('.'));
const key = fc.constantFrom('k1', 'k2', 'a', 'b', 'x');
const envelope = fc.record({
  mode: fc.constantFrom('allow', 'ask', 'deny'),
  mayDelegate: fc.constant(true),
}) as fc.Arbitrary<{
  mode: 'allow' | 'ask' | 'deny';
  mayDelegate: boolean;
}>;
const request = fc.record({
  pub: fc.array(pattern, { maxLength: 4 }),
  sub: fc.array(pattern, { maxLength: 4 }),
});

/** A chain of delegations from agent `a` or `b`: each generation may ask for any patterns. */
const chain = fc.record({
  agent: fc.constantFrom('a', 'b'),
  top: envelope,
  steps: fc.array(fc.record({ key, envelope, request }), { minLength: 1, maxLength: 4 }),
});

function allows(g: BusGrant, side: 'pub' | 'sub', s: string): boolean {
  return grantAllows(g, side, s);
}

describe('bus grants', () => {
  it('covers() is sound: a covered pattern matches only subjects the covering one matches', () => {
    fc.assert(
      fc.property(pattern, pattern, concrete, (outer, inner, s) => {
        if (covers(outer, inner) && matches(inner, s)) expect(matches(outer, s)).toBe(true);
        if (matches(outer, s) && matches(inner, s)) expect(overlaps(outer, inner)).toBe(true);
      }),
      { numRuns: runs(3000) },
    );
  });

  it("law: a sub-agent's minted permissions are a subset of its parent's, at every generation", () => {
    fc.assert(
      fc.property(chain, fc.array(concrete, { minLength: 20, maxLength: 20 }), (c, subjects) => {
        let parent = agentGrant(c.agent, c.top);
        let scope: ActorScope = { agentId: c.agent, path: [] };
        let parentEnvelope = c.top;
        for (const step of c.steps) {
          const child = childGrant(
            parent,
            scope,
            { ...parentEnvelope, mayDelegate: true },
            step.key,
            step.request,
          );
          for (const side of ['pub', 'sub'] as const) {
            // Syntactic: every allowed pattern sits inside one of the parent's, the parent's denies are kept.
            for (const p of child.grant[side].allow)
              expect(parent[side].allow.some((q) => covers(q, p))).toBe(true);
            for (const d of parent[side].deny) expect(child.grant[side].deny).toContain(d);
            // Semantic: no concrete subject is allowed to the child and refused to the parent.
            for (const s of [
              ...subjects,
              ...child.grant[side].allow.map((p) => p.replace(/\*/g, 'x').replace(/>$/, 'x')),
            ]) {
              if (allows(child.grant, side, s)) expect(allows(parent, side, s)).toBe(true);
            }
            // Nothing asked for outside the parent was granted silently.
            for (const p of step.request[side]) {
              const granted = child.grant[side].allow.includes(p);
              const narrowed = child.narrowed.some((n) => n.side === side && n.pattern === p);
              expect(granted || narrowed).toBe(true);
            }
          }
          expect(child.grant.inboxPrefix.startsWith(`${parent.inboxPrefix}.`)).toBe(true);
          parent = child.grant;
          scope = child.scope;
          parentEnvelope = step.envelope;
        }
      }),
      { numRuns: runs(400) },
    );
  });

  it("an agent's grant holds its own subjects only, and never a decision", () => {
    const g = agentGrant('a', { mode: 'ask' });
    for (const s of ['snotra.v1.agent.a.note', 'snotra.v1.agent.a.child.k.note']) {
      expect(allows(g, 'pub', s)).toBe(true);
      expect(allows(g, 'sub', s)).toBe(true);
    }
    // Its incoming queue: it reads it, only the gateway writes it (a message there starts a run).
    expect(allows(g, 'sub', 'snotra.v1.agent.a.message')).toBe(true);
    expect(allows(g, 'pub', 'snotra.v1.agent.a.message')).toBe(false);
    // Look-alikes deeper in its namespace are its own.
    expect(allows(g, 'pub', 'snotra.v1.agent.a.message.x')).toBe(true);
    expect(allows(g, 'pub', 'snotra.v1.agent.a.child.message.message')).toBe(true);
    expect(allows(g, 'sub', '_INBOX.agent.a.abc')).toBe(true);
    expect(allows(g, 'pub', '$JS.API.CONSUMER.MSG.NEXT.SNOTRA_AGENT_MESSAGES.agent_a')).toBe(true);
    expect(allows(g, 'pub', '$JS.ACK.SNOTRA_AGENT_MESSAGES.agent_a.1.2.3.4.5')).toBe(true);
    for (const s of [
      'snotra.v1.agent.b.message',
      'snotra.v1.agent.ab.message',
      'snotra.v1.agent.a',
      'snotra.v1.approval.x.resolved',
      '$JS.API.CONSUMER.MSG.NEXT.SNOTRA_AGENT_MESSAGES.agent_b',
      '$JS.ACK.SNOTRA_AGENT_MESSAGES.agent_ab.1.2.3.4.5',
      '$JS.API.STREAM.MSG.GET.SNOTRA_AGENT_MESSAGES',
      '_INBOX.agent.b.abc',
      '_INBOX.a.abc',
      '_INBOX.gateway.abc',
    ]) {
      expect(allows(g, 'pub', s)).toBe(false);
      expect(allows(g, 'sub', s)).toBe(false);
    }
    // Mode deny: its messages still reach it (to be refused there), it publishes nothing of its own.
    const denied = agentGrant('a', { mode: 'deny' });
    expect(allows(denied, 'pub', 'snotra.v1.agent.a.note')).toBe(false);
    expect(allows(denied, 'sub', 'snotra.v1.agent.a.message')).toBe(true);
  });

  it.each(['a.b', 'a*', '>', 'a b', '', 'a\u0000', 'a\u200b', 'x'.repeat(129)])(
    'refuses the agent id or delegation key %j (subject injection)',
    (bad) => {
      expect(() => agentGrant(bad, { mode: 'ask' })).toThrow(
        expect.objectContaining({ code: 'bus_invalid_grant' }),
      );
      expect(() =>
        childGrant(
          agentGrant('a', { mode: 'ask' }),
          { agentId: 'a', path: [] },
          { mode: 'ask', mayDelegate: true },
          bad,
        ),
      ).toThrow(expect.objectContaining({ code: 'bus_invalid_grant' }));
    },
  );

  it('an envelope that may not delegate mints no child grant', () => {
    expect(() =>
      childGrant(
        agentGrant('a', { mode: 'ask' }),
        { agentId: 'a', path: [] },
        { mode: 'ask', mayDelegate: false },
        'k',
      ),
    ).toThrow(/may not delegate/);
  });
});

describe('bus auth keys on disk', () => {
  it('are created once and read back the same; a group-readable or malformed file is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'snotra-busauth-keys-'));
    try {
      const auth = join(dir, 'auth');
      const first = loadOrCreateBusAuthKeys(auth);
      const again = loadOrCreateBusAuthKeys(auth);
      expect(again.signing.getPublicKey()).toBe(first.signing.getPublicKey());
      expect(again.operator.getPublicKey()).toBe(first.operator.getPublicKey());
      const file = join(auth, SEEDS_FILE);
      chmodSync(file, 0o640);
      let err: unknown;
      try {
        loadOrCreateBusAuthKeys(auth);
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code: 'bus_invalid_auth_keys' });
      expect((err as Error).message).toContain('0600');
      writeFileSync(
        file,
        JSON.stringify({ v: 1, operator: 'SUnotanoperatorseed', account: 'x', signing: 'y', system: 'z' }),
        {
          mode: 0o600,
        },
      );
      chmodSync(file, 0o600);
      expect(() => loadOrCreateBusAuthKeys(auth)).toThrow(
        /operator seed is missing or not an operator nkey seed/,
      );
      writeFileSync(file, 'not json');
      expect(() => loadOrCreateBusAuthKeys(auth)).toThrow(/not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
