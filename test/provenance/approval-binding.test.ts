import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkBinding } from '../../actors/run/approval-binding.ts';
import type { Decision } from '../../policy/decision.ts';
import { argsHash, canonicalArgs } from '../../policy/provenance/args-hash.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import type { ExecuteInput } from '../../machines/run/types.ts';
import { approvalInput, openTemp } from '../store/helpers.ts';
import { runs } from '../support/laws.ts';

const registry = ToolRegistry.withBuiltins();

/** A JSON value with nested objects, arrays, unicode strings and numbers. */
const json = fc.jsonValue({ maxDepth: 3 });

/** The same value with every object's keys in reverse order. */
function reorder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reorder);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reorder(x)]),
  );
}

describe('canonical argument hashes (RFC 8785)', () => {
  it('law: key order never changes the hash', () => {
    fc.assert(
      fc.property(json, (v) => argsHash(reorder(v)) === argsHash(v)),
      { numRuns: runs(100) },
    );
  });

  it('law: equal hashes mean equal JSON data (no two distinct values collide in canonical text)', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const same = canonicalArgs(a) === canonicalArgs(b);
        return same === (argsHash(a) === argsHash(b));
      }),
      { numRuns: runs(100) },
    );
  });

  it('law: changing any string leaf changes the hash', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        fc.pre(x !== y);
        return argsHash({ text: x }) !== argsHash({ text: y });
      }),
      { numRuns: runs(100) },
    );
  });

  it('keeps look-alikes apart: no Unicode normalization, no case folding, no trimming', () => {
    const base = argsHash({ channel: '#caf\u00e9' });
    for (const lookAlike of ['#cafe\u0301', '#CAF\u00c9', '#caf\u00e9 ', '#caf\u00e9\u200b', '#саf\u00e9']) {
      expect(argsHash({ channel: lookAlike }), JSON.stringify(lookAlike)).not.toBe(base);
    }
  });

  it('numbers in their shortest form: 1.0 and 1 are the same value, "1" is not', () => {
    expect(argsHash({ n: 1.0 })).toBe(argsHash({ n: 1 }));
    expect(argsHash({ n: '1' })).not.toBe(argsHash({ n: 1 }));
    expect(canonicalArgs({ b: [2, { d: 1, c: null }], a: 'x' })).toBe('{"a":"x","b":[2,{"c":null,"d":1}]}');
  });

  it('fails closed on values without a JSON form', () => {
    expect(argsHash({ n: Number.NaN })).toBeNull();
    expect(argsHash({ n: Number.POSITIVE_INFINITY })).toBeNull();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(argsHash(cyclic)).toBeNull();
    expect(argsHash(undefined)).toBe(argsHash(null));
  });
});

const askDecision: Decision = {
  decision: 'approval-required',
  reason: 'mode_ask',
  risk: 'external',
  rule: { id: 'mode.ask', source: 'mode' },
  targets: [{ argument: 'channel', input: '#ops', resolved: null, root: null, access: null }],
  humanRequired: true,
  step: 5,
};

function input(args: unknown, decision: Decision = askDecision): ExecuteInput {
  return { runId: 'run-1', call: { id: 'c1', tool: 'send_message', args }, decision, idempotencyKey: 'k' };
}

/** A store holding the approval of run-1's call c1 for `approved`, decided `decision`. */
function withApproval(approved: unknown, decide: 'approved' | 'denied' | null = 'approved', hash = true) {
  const { store, clock } = openTemp();
  const hashed = argsHash(approved);
  store.approvals.create(
    approvalInput(1, clock.now, 60_000, {
      callId: 'run-1:c1',
      tool: 'send_message',
      args: approved,
      risk: 'external',
      ...(hash && hashed !== null ? { argsHash: hashed } : {}),
    }),
  );
  if (decide !== null) store.approvals.decide('appr-1', decide, 'local:alice');
  return store;
}

describe('the executor runs only what was approved', () => {
  const approved = { channel: '#ops', text: 'deploy 1.2' };

  it('runs the approved arguments, also with their keys reordered', () => {
    const store = withApproval(approved);
    expect(checkBinding(input(approved), { store, registry })).toMatchObject({
      ok: true,
      approvalId: 'appr-1',
      argsHash: argsHash(approved),
    });
    expect(checkBinding(input({ text: 'deploy 1.2', channel: '#ops' }), { store, registry }).ok).toBe(true);
  });

  it('refuses changed arguments: another value, an added or a removed key, a look-alike', () => {
    const store = withApproval(approved);
    const evasions = [
      { channel: '#ops', text: 'deploy 6.6' },
      { channel: '#ops', text: 'deploy 1.2', extra: true },
      { channel: '#ops' },
      { channel: '#ops', text: 'deploy 1.2 ' },
      { channel: '#\u043eps', text: 'deploy 1.2' },
      { channel: '#ops', text: ['deploy 1.2'] },
      JSON.parse('{"channel":"#ops","text":"deploy 1.2","__proto__":{"x":1}}') as unknown,
      null,
    ];
    for (const args of evasions) {
      const r = checkBinding(input(args), { store, registry });
      expect(r, JSON.stringify(args)).toMatchObject({
        ok: false,
        detail: { cause: 'args_hash', approvalId: 'appr-1', approvedHash: argsHash(approved) },
      });
    }
  });

  it('refuses a call whose approval is missing, pending or denied', () => {
    expect(
      checkBinding(input(approved), { store: withApproval(approved, 'denied'), registry }),
    ).toMatchObject({
      ok: false,
      detail: { cause: 'no_approval', status: 'denied' },
    });
    expect(checkBinding(input(approved), { store: withApproval(approved, null), registry })).toMatchObject({
      ok: false,
      detail: { cause: 'no_approval', status: 'pending' },
    });
    const { store } = openTemp();
    expect(checkBinding(input(approved), { store, registry })).toMatchObject({
      ok: false,
      detail: { cause: 'no_approval', approvalId: null },
    });
  });

  it('refuses an approval written by this version without a hash (it binds nothing)', () => {
    const store = withApproval(approved, 'approved', false);
    expect(checkBinding(input(approved), { store, registry })).toMatchObject({
      ok: false,
      detail: { cause: 'args_hash', approvedHash: null },
    });
  });

  it('a call that needed no human is not checked', () => {
    const { store } = openTemp();
    const allow: Decision = { ...askDecision, decision: 'allow', reason: 'mode_allow', humanRequired: false };
    expect(checkBinding(input({ anything: 1 }, allow), { store, registry })).toEqual({
      ok: true,
      argsHash: null,
    });
  });
});

describe("a standing approval's target", () => {
  function standing() {
    const { store } = openTemp();
    const grant = store.standingApprovals.grant({
      ownerTaskId: 'task-1',
      tool: 'send_message',
      target: '#ops',
      grantedBy: 'local:alice',
    });
    const decision: Decision = {
      ...askDecision,
      decision: 'allow',
      reason: 'standing_approval',
      rule: { id: grant.id, source: 'standing-approval' },
      humanRequired: false,
      step: 8,
    };
    return { store, grant, decision };
  }

  it('runs on the exact target of the grant, whatever the other arguments', () => {
    const { store, grant, decision } = standing();
    expect(
      checkBinding(input({ channel: '#ops', text: 'any' }, decision), { store, registry }),
    ).toMatchObject({
      ok: true,
      standingApprovalId: grant.id,
    });
  });

  it('refuses the grant reused on another target, a look-alike or a missing one', () => {
    const { store, grant, decision } = standing();
    for (const channel of ['#prod', '#OPS', '#ops ', '#\u043eps', undefined, 7]) {
      const r = checkBinding(input({ channel, text: 'x' }, decision), { store, registry });
      expect(r, String(channel)).toMatchObject({
        ok: false,
        detail: { cause: 'standing_target', standingApprovalId: grant.id, grantedTarget: '#ops' },
      });
    }
  });

  it('refuses a grant that does not exist or is for another tool', () => {
    const { store, decision } = standing();
    const ghost: Decision = { ...decision, rule: { id: 'no-such-grant', source: 'standing-approval' } };
    expect(checkBinding(input({ channel: '#ops', text: 'x' }, ghost), { store, registry }).ok).toBe(false);
    const other: ExecuteInput = {
      ...input({ url: '#ops', method: 'GET' }, decision),
      call: { id: 'c1', tool: 'http_request', args: { url: '#ops', method: 'GET' } },
    };
    expect(checkBinding(other, { store, registry }).ok).toBe(false);
  });
});
