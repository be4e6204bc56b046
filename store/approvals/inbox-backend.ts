import type { ApprovalInbox } from './inbox.ts';
import type { ApprovalDecision, ApprovalRecord, DecideResult } from './types.ts';

/**
 * The part of the Inbox that every backend keeps the same way: the SQLite store on one node and
 * the cluster's shared Inbox on JetStream (runtime/cluster/inbox.ts). Both are held to it by one
 * conformance spec (test/support/store-conformance.ts). What it promises:
 * - `open` publishes a pending request once per id: opening it again (a retry, another node
 *   publishing for a dead one) changes nothing, and never reopens a decided or expired request;
 * - `decide` is single use: exactly one decision per request ever returns `ok: true`; every other
 *   says why (`already_decided` naming who decided, `expired`, `not_found`) and changes nothing;
 * - a decision at or after `expiresAt` is refused as `expired`, and the request stays expired;
 * - `get` returns the request as it stands, its decision applied, with the fields it was opened with.
 */
export interface InboxBackend {
  /** Publishes a pending request; returns it as it stands (unchanged when it already existed). */
  open(approval: ApprovalRecord): Promise<ApprovalRecord>;
  /** The request as it stands, or null when no request has that id. */
  get(id: string): Promise<ApprovalRecord | null>;
  /** A human's decision at `now` (ms, compared with `expiresAt`): single use. */
  decide(
    id: string,
    decision: ApprovalDecision,
    user: string,
    now: number,
    reason?: string,
  ): Promise<DecideResult>;
}

/** The SQLite store's Inbox as an {@link InboxBackend} (one request per tool call, as the store keeps it). */
export function sqliteInboxBackend(inbox: ApprovalInbox): InboxBackend {
  return {
    open: async (a) =>
      inbox.create({
        id: a.id,
        callId: a.callId,
        runId: a.runId,
        sessionId: a.sessionId,
        taskId: a.taskId,
        agentId: a.agentId,
        parentAgentId: a.parentAgentId,
        parentRunId: a.parentRunId,
        surface: a.surface,
        tool: a.tool,
        args: a.args,
        target: a.target,
        risk: a.risk,
        reason: a.reason,
        ruleId: a.ruleId,
        idempotencyKey: a.idempotencyKey,
        resumeCheckpoint: a.resumeCheckpoint,
        createdAt: a.createdAt,
        expiresAt: a.expiresAt,
      }).approval,
    get: async (id) => inbox.get(id),
    // Async: a refused input is a rejected promise, as on every backend.
    decide: async (id, decision, user, now, reason) => inbox.decide(id, decision, user, now, reason),
  };
}
