import type { ToolCallLedger } from './ledger.ts';
import { CallStatus, type LedgerEntry } from './types.ts';

/** What claiming (or taking again) a call found. */
export type ClaimState =
  /** This caller holds the claim: it, and no one else, may run the call. */
  | { readonly state: 'claimed' }
  /** Claimed and not finished (running, or its holder died): not to be run by this caller. */
  | { readonly state: 'taken'; readonly attempt: number }
  | { readonly state: 'completed'; readonly stored: unknown }
  | { readonly state: 'failed'; readonly stored: unknown };

/** A claim as it stands. */
export interface ClaimView {
  readonly status: 'unfinished' | 'completed' | 'failed';
  readonly attempt: number;
  /** The outcome a settle recorded (result or error), else null. */
  readonly stored: unknown;
}

/** The call a claim is made for. */
export interface ClaimCall {
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
}

/**
 * The part of "execute once" (DESIGN.md §3) that every backend keeps the same way: the SQLite
 * ledger on one node and the cluster's claims bucket on JetStream (runtime/cluster/claims.ts).
 * Both are held to it by one conformance spec (test/support/claims-conformance.ts). It promises:
 * - `claim` is single use per idempotency key: exactly one claim of a key ever returns `claimed`,
 *   whoever makes it and however many make it at once; every other says what stands (`taken`
 *   with its attempt, or the stored outcome);
 * - `settle` records the outcome of an unfinished claim once: a later settle changes nothing,
 *   and every later claim returns that first outcome;
 * - `retake` of an abandoned claim (its holder died) at the attempt it was found at: exactly one
 *   retake wins (attempt + 1); a stale attempt or a settled claim changes nothing;
 * - keys are exact: a look-alike key is another claim;
 * - a claim with bad input is refused with an error naming the input, and nothing is claimed.
 */
export interface ClaimBackend {
  /** Claims `key` before its call runs. */
  claim(key: string, call: ClaimCall): Promise<ClaimState>;
  /** Takes an abandoned claim, found at `attempt`, again. */
  retake(key: string, attempt: number): Promise<ClaimState>;
  /** Records the outcome of an unfinished claim (nothing when it is settled already or absent). */
  settle(key: string, status: 'completed' | 'failed', stored: unknown): Promise<void>;
  /** The claim as it stands, or null when the key was never claimed. */
  get(key: string): Promise<ClaimView | null>;
}

function stateOf(entry: LedgerEntry): ClaimState {
  if (entry.status === CallStatus.completed) return { state: 'completed', stored: entry.result };
  if (entry.status === CallStatus.failed) return { state: 'failed', stored: entry.error };
  return { state: 'taken', attempt: entry.attempt };
}

/**
 * The SQLite ledger as a {@link ClaimBackend}: a claim is the `started` row, a settle its outcome,
 * an abandoned claim an `interrupted` row (what a restart makes of a call that was running).
 */
export function sqliteClaimBackend(ledger: ToolCallLedger): ClaimBackend {
  return {
    // Async: a refused input is a rejected promise, as on every backend.
    claim: async (key, call) => {
      const begun = ledger.beginCall({ idempotencyKey: key, ...call });
      return begun.created ? { state: 'claimed' } : stateOf(begun.entry);
    },
    retake: async (key, attempt) => {
      const entry = ledger.lookup(key);
      if (entry === null) throw new Error(`retake: no claim of idempotency key ${JSON.stringify(key)}`);
      if (entry.status !== CallStatus.interrupted || entry.attempt !== attempt) return stateOf(entry);
      ledger.retryInterrupted(key);
      return { state: 'claimed' };
    },
    settle: async (key, status, stored) => {
      if (ledger.lookup(key)?.status !== CallStatus.started) return;
      if (status === CallStatus.completed) ledger.completeCall(key, stored);
      else ledger.failCall(key, stored);
    },
    get: async (key) => {
      const entry = ledger.lookup(key);
      if (entry === null) return null;
      const status: ClaimView['status'] =
        entry.status === CallStatus.completed || entry.status === CallStatus.failed
          ? entry.status
          : 'unfinished';
      return {
        status,
        attempt: entry.attempt,
        stored: entry.status === CallStatus.failed ? entry.error : entry.result,
      };
    },
  };
}
