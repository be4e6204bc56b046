import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  alteredAtRest,
  argsLostAtRest,
  censorCount,
  KEPT_ARGS_MAX_BYTES,
  KeptArgs,
  markRedactedAtRest,
} from '../../actors/run/args-at-rest.ts';
import type { ProposedCall } from '../../machines/run/types.ts';
import { Redactor } from '../../store/redaction/redactor.ts';
import { runs } from '../support/laws.ts';

/** A call as the store gives it back: redacted, through JSON (what a restored run holds). */
function readBack(call: ProposedCall, redactor: Redactor): ProposedCall {
  return JSON.parse(JSON.stringify(redactor.redact(call))) as ProposedCall;
}

function proposed(args: unknown, redactor: Redactor): ProposedCall {
  const out = markRedactedAtRest(
    { kind: 'calls', calls: [{ id: 'c1', tool: 'write_file', args }] },
    redactor,
  );
  if (out.kind !== 'calls' || out.calls[0] === undefined) throw new Error('no call');
  return out.calls[0];
}

const SECRET = 'zq-secret-0123456789';

/** Text pieces: plain words, the registered secret, a credential shape, the censor text itself. */
const piece = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ]{0,12}$/),
  fc.constant(SECRET),
  fc.constant('password=hunter2hunter2'),
  fc.constant('[REDACTED]'),
);
const text = fc.array(piece, { maxLength: 4 }).map((p) => p.join(' '));
const args = fc.dictionary(
  fc.constantFrom('path', 'content', 'text', 'note', 'items'),
  fc.oneof(text, fc.array(text, { maxLength: 3 })),
  {
    maxKeys: 4,
  },
);

describe('a call read back with arguments redacted at rest is never executed with them', () => {
  it('the flag is set exactly when storing the arguments would alter them', () => {
    fc.assert(
      fc.property(args, (a) => {
        const r = new Redactor();
        r.registerSecret(SECRET);
        const call = proposed(a, r);
        const altered = JSON.stringify(r.redact(a)) !== JSON.stringify(a);
        expect(call.argsRedactedAtRest === true).toBe(altered);
        expect(call.args).toBe(a);
      }),
      { numRuns: runs(100) },
    );
  });

  it('read back from the store, a call is refused exactly when its arguments are not the model’s', () => {
    fc.assert(
      fc.property(args, (a) => {
        const r = new Redactor();
        r.registerSecret(SECRET);
        const back = readBack(proposed(a, r), r);
        const same = JSON.stringify(back.args) === JSON.stringify(a);
        expect(argsLostAtRest(back, false, r)).toBe(!same);
        // The same call held live (the model step's own object) always runs as written.
        expect(argsLostAtRest(proposed(a, r), true, r)).toBe(false);
      }),
      { numRuns: runs(100) },
    );
  });

  it('a secret learned after the model step and before the write is caught by the censor count', () => {
    fc.assert(
      fc.property(args, (a) => {
        const r = new Redactor();
        const call = proposed(a, r); // the secret is not known yet
        r.registerSecret(SECRET);
        const back = readBack(call, r);
        const same = JSON.stringify(back.args) === JSON.stringify(a);
        expect(argsLostAtRest(back, false, r)).toBe(!same);
      }),
      { numRuns: runs(100) },
    );
  });

  it('benign look-alikes: the model’s own censor text, and values that only resemble secrets, are kept', () => {
    const r = new Redactor();
    r.registerSecret(SECRET);
    for (const a of [
      { path: 'notes.txt', content: 'the log shows [REDACTED] where the key was' },
      { path: 'notes.txt', content: '[REDACTED][REDACTED]', note: 'reset your password in the vault' },
      { path: 'zq-secret.txt', content: 'zq-secret-01234 is not the secret' },
      { path: 'a.txt', content: 'password reset instructions' },
    ]) {
      const call = proposed(a, r);
      expect(call.argsRedactedAtRest, JSON.stringify(a)).toBeUndefined();
      expect(argsLostAtRest(readBack(call, r), false, r), JSON.stringify(a)).toBe(false);
    }
  });

  it('the evasions: a secret in a key, in an array, URL-escaped, or a credential shape are flagged', () => {
    const r = new Redactor();
    r.registerSecret(SECRET);
    for (const a of [
      { [`k-${SECRET}`]: 'x' },
      { items: ['a', `b ${SECRET}`] },
      { url: `https://h/?q=${encodeURIComponent(SECRET)}` },
      { content: 'password=hunter2hunter2' },
      { content: 'Authorization: Bearer abcdefghijklmnop0123' },
    ]) {
      const call = proposed(a, r);
      expect(call.argsRedactedAtRest, JSON.stringify(a)).toBe(true);
      expect(argsLostAtRest(readBack(call, r), false, r), JSON.stringify(a)).toBe(true);
    }
  });

  it('the runtime’s findings replace whatever the model put in the flag fields', () => {
    const r = new Redactor();
    const out = markRedactedAtRest(
      {
        kind: 'calls',
        calls: [
          {
            id: 'c1',
            tool: 'write_file',
            args: { content: 'x' },
            argsRedactedAtRest: true,
            argsCensorCount: 3,
          },
        ],
      },
      r,
    );
    expect(out).toEqual({ kind: 'calls', calls: [{ id: 'c1', tool: 'write_file', args: { content: 'x' } }] });
    // A stored call whose censor text is all the model's own runs; one more is a redaction.
    const own = { id: 'c2', tool: 'write_file', args: { content: '[REDACTED]' }, argsCensorCount: 1 };
    expect(argsLostAtRest(own, false, r)).toBe(false);
    expect(argsLostAtRest({ ...own, args: { content: '[REDACTED] [REDACTED]' } }, false, r)).toBe(true);
    expect(argsLostAtRest({ ...own, argsCensorCount: undefined }, false, r)).toBe(true);
    expect(censorCount('[REDACTED]', { '[REDACTED]': ['[REDACTED]x[REDACTED]'] })).toBe(3);
    expect(alteredAtRest(r, { a: 1, b: [true, null, 'plain'] })).toBe(false);
  });
});

describe('the exact arguments kept in memory for a parked run of this process', () => {
  it('property: a kept call is given back once, for its own redacted form only', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 4 }),
        fc.string({ maxLength: 8 }),
        (parts, other) => {
          const redactor = new Redactor();
          redactor.registerSecret(SECRET);
          const call = proposed({ path: 'notes.txt', content: parts.join('') }, redactor);
          const kept = new KeptArgs();
          kept.keep('r1', call);
          const stored = readBack(call, redactor);
          // Another run, another call id, another tool or other arguments: nothing is given.
          expect(kept.take('r2', stored, redactor)).toBeNull();
          expect(kept.take('r1', { ...stored, id: 'c2' }, redactor)).toBeNull();
          kept.keep('r1', call);
          expect(kept.take('r1', { ...stored, tool: 'send_message' }, redactor)).toBeNull();
          kept.keep('r1', call);
          // Other arguments (seen through redaction: two texts may redact alike, and then the
          // kept one, the model's own, is what runs).
          const changed = { ...stored, args: { path: `other-${other}.txt`, content: parts.join('') } };
          expect(kept.take('r1', changed, redactor)).toBeNull();
          // Its own redacted form: the exact call, once.
          kept.keep('r1', call);
          expect(kept.take('r1', stored, redactor)).toBe(call);
          expect(kept.take('r1', stored, redactor)).toBeNull();
        },
      ),
      { numRuns: runs(200) },
    );
  });

  it('forgets a call that ran live, and drops the oldest past its byte bound', () => {
    const redactor = new Redactor();
    const kept = new KeptArgs();
    const call = (id: string, size: number): ProposedCall => ({
      id,
      tool: 'write_file',
      args: { path: 'a', content: 'p'.repeat(size) },
      argsRedactedAtRest: true,
    });
    const a = call('a', 10);
    kept.keep('r1', a);
    kept.forget('r1', 'a');
    expect(kept.take('r1', a, redactor)).toBeNull();
    const third = Math.floor(KEPT_ARGS_MAX_BYTES / 3);
    const [b, c, d] = [call('b', third), call('c', third), call('d', third)];
    kept.keep('r1', b);
    kept.keep('r1', c);
    kept.keep('r1', d); // over the bound: b, the oldest, is dropped
    expect(kept.take('r1', b, redactor)).toBeNull();
    expect(kept.take('r1', d, redactor)).toBe(d);
    expect(kept.take('r1', c, redactor)).toBe(c);
    // Larger than the bound alone: not kept at all.
    const huge = call('e', KEPT_ARGS_MAX_BYTES + 1);
    kept.keep('r1', huge);
    expect(kept.take('r1', huge, redactor)).toBeNull();
  });
});
