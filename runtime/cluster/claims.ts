import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { CallClaims, ClaimOutcome } from '../../actors/run/execute.ts';
import type { BusLogger } from '../bus/index.ts';
import { createIfAbsent, readVersioned, updateAt, type Bucket } from './kv.ts';
import { retryDeadline, withRetry } from './retry.ts';

/** The claim of one call: written with `create` before the call runs, its outcome after. */
export const ClaimRecord = z.strictObject({
  v: z.literal(1),
  key: z.string().min(1),
  runId: z.string().min(1),
  callId: z.string().min(1),
  tool: z.string().min(1),
  /** The node that runs (or ran) the current attempt. */
  node: z.string().min(1),
  attempt: z.number().int().positive(),
  status: z.enum(['started', 'completed', 'failed']),
  /** The redacted observation of a finished call (what the model saw), else null. */
  stored: z.unknown(),
  at: z.number().int().nonnegative(),
  /** Random per attempt: a create whose reply was lost and is retried recognises its own write. */
  nonce: z.string().min(1),
});
export type ClaimRecord = z.infer<typeof ClaimRecord>;

/** What a claim is made with, named as the ledger names it (a refusal names the field). */
const ClaimInput = z.strictObject({
  idempotencyKey: z.string().min(1),
  runId: z.string().min(1),
  callId: z.string().min(1),
  tool: z.string().min(1),
});

/**
 * Exactly-once claims across nodes (DESIGN.md §3 extended to a cluster): before an external or
 * non-idempotent call runs, its idempotency key is created in the `claims` bucket; only the node
 * whose `create` succeeded runs it. A node that finds a claim reuses its stored outcome, or — when
 * the claim was started and never finished (its node died mid-call) — reports the call interrupted.
 * While the bucket has no quorum, a claim waits (never runs unclaimed) until `timeoutMs`, then
 * reports `unavailable` and the call does not run.
 */
export class ClusterClaims implements CallClaims {
  constructor(
    private readonly kv: Bucket,
    private readonly nodeId: string,
    private readonly clock: () => number,
    private readonly logger: BusLogger,
    private readonly timeoutMs: number,
    private readonly stopped: () => boolean,
  ) {}

  async claim(key: string, call: { runId: string; callId: string; tool: string }): Promise<ClaimOutcome> {
    // Bad input is never claimed (so never run): refused before anything is written.
    const input = ClaimInput.safeParse({ idempotencyKey: key, ...call });
    if (!input.success) {
      return {
        state: 'unavailable',
        message: `cluster claim: invalid input: ${z.prettifyError(input.error)}`,
      };
    }
    const record: ClaimRecord = {
      v: 1,
      key,
      ...call,
      node: this.nodeId,
      attempt: 1,
      status: 'started',
      stored: null,
      at: this.clock(),
      nonce: randomUUID(),
    };
    try {
      this.logger.debug({ key }, 'cluster: claiming a call');
      return await withRetry(
        async () => {
          if ((await createIfAbsent(this.kv, key, record)) !== null) return { state: 'claimed' } as const;
          const found = await readVersioned(this.kv, key, ClaimRecord, 'claim');
          if (found === null) throw new Error('the claim vanished between create and read');
          if (found.value.nonce === record.nonce) return { state: 'claimed' } as const;
          return outcomeOf(found.value);
        },
        retryDeadline(this.timeoutMs),
        this.stopped,
      );
    } catch (err) {
      this.logger.error(
        { err: (err as Error).message },
        'cluster: a call could not be claimed; it was not run',
      );
      return {
        state: 'unavailable',
        message: 'the cluster could not record the claim of this call, so it was not run',
      };
    }
  }

  async retake(key: string, attempt: number): Promise<ClaimOutcome> {
    // One nonce for every try: a try whose write landed but whose reply was lost is recognised
    // as this node's own attempt by the next, not as another's (which would report it interrupted).
    const nonce = randomUUID();
    try {
      return await withRetry(
        async (): Promise<ClaimOutcome> => {
          for (;;) {
            const found = await readVersioned(this.kv, key, ClaimRecord, 'claim');
            if (found === null) throw new Error('no claim to take again');
            if (found.value.nonce === nonce) return { state: 'claimed' };
            if (found.value.status !== 'started' || found.value.attempt !== attempt)
              return outcomeOf(found.value);
            const next: ClaimRecord = {
              ...found.value,
              node: this.nodeId,
              attempt: found.value.attempt + 1,
              at: this.clock(),
              nonce,
            };
            if ((await updateAt(this.kv, key, next, found.revision)) !== null) return { state: 'claimed' };
            // Another node took it again first: it runs the call, this one does not.
            const now = await readVersioned(this.kv, key, ClaimRecord, 'claim');
            if (now !== null && now.value.nonce !== next.nonce) return outcomeOf(now.value);
          }
        },
        retryDeadline(this.timeoutMs),
        this.stopped,
      );
    } catch (err) {
      this.logger.error(
        { err: (err as Error).message },
        'cluster: an interrupted call could not be claimed again; it was not run',
      );
      return {
        state: 'unavailable',
        message: 'the cluster could not record the claim of this call, so it was not run',
      };
    }
  }

  async settle(key: string, status: 'completed' | 'failed', stored: unknown): Promise<void> {
    try {
      await withRetry(
        async () => {
          for (;;) {
            const found = await readVersioned(this.kv, key, ClaimRecord, 'claim');
            if (found === null || found.value.status !== 'started') return;
            const next: ClaimRecord = { ...found.value, status, stored: stored ?? null, at: this.clock() };
            if ((await updateAt(this.kv, key, next, found.revision)) !== null) return;
          }
        },
        retryDeadline(this.timeoutMs),
        this.stopped,
      );
    } catch (err) {
      // The claim stays `started`: another node resuming the run reports the call interrupted
      // (never runs it again). The local ledger has the outcome.
      this.logger.error(
        { err: (err as Error).message },
        'cluster: the outcome of a call could not be recorded in its claim',
      );
    }
  }

  /** The claim of a key as it stands, without taking it; null when there is none or it cannot be read now. */
  async peek(key: string): Promise<{ node: string; mine: boolean; outcome: ClaimOutcome } | null> {
    try {
      const found = await this.get(key);
      if (found === null) return null;
      return { node: found.node, mine: found.node === this.nodeId, outcome: outcomeOf(found) };
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'cluster: a claim could not be read; claiming it instead',
      );
      return null;
    }
  }

  /** The claim of a key as stored, or null (for tests and inspection). */
  async get(key: string): Promise<ClaimRecord | null> {
    return (await readVersioned(this.kv, key, ClaimRecord, 'claim'))?.value ?? null;
  }
}

function outcomeOf(c: ClaimRecord): ClaimOutcome {
  if (c.status === 'completed') return { state: 'completed', stored: c.stored };
  if (c.status === 'failed') return { state: 'failed', stored: c.stored };
  return { state: 'taken', node: c.node, attempt: c.attempt };
}
