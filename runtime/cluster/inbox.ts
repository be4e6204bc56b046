import { z } from 'zod';
import {
  checkDecisionInput,
  type ApprovalDecision,
  type ApprovalRecord,
  type DecideResult,
  type StringScrubber,
} from '../../store/index.ts';
import { createIfAbsent, readVersioned, updateAt, type Versioned, type Bucket } from './kv.ts';

/** One approval in the shared Inbox: the request as opened, and its single decision. */
export const InboxRecord = z.strictObject({
  v: z.literal(1),
  /** The approval record as the opening node stored it (args redacted), status `pending`. */
  approval: z.custom<ApprovalRecord>(
    (a) => typeof a === 'object' && a !== null && typeof (a as { id?: unknown }).id === 'string',
    'an approval record',
  ),
  status: z.enum(['pending', 'approved', 'denied', 'expired']),
  decidedBy: z.string().nullable(),
  decidedAt: z.number().int().nullable(),
  decisionReason: z.string().nullable(),
  /** The node through which the decision (or expiry) was made. */
  decidedOn: z.string().nullable(),
  /** The node that parked the run on it (absent in records written before it was kept). */
  openedOn: z.string().optional(),
});
export type InboxRecord = z.infer<typeof InboxRecord>;

/** The approval as it stands in the shared Inbox (its decision applied). */
export function approvalOf(record: InboxRecord): ApprovalRecord {
  return {
    ...record.approval,
    status: record.status,
    decidedBy: record.decidedBy,
    decidedAt: record.decidedAt,
    decisionReason: record.decisionReason,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString();

function sameDecision(a: InboxRecord, b: InboxRecord): boolean {
  return (
    a.status === b.status &&
    a.decidedBy === b.decidedBy &&
    a.decidedAt === b.decidedAt &&
    a.decidedOn === b.decidedOn &&
    a.decisionReason === b.decisionReason
  );
}

/**
 * The Inbox shared by every node. A decision is a compare-and-swap from `pending` on the
 * record's revision, so of two nodes deciding the same approval exactly one wins; the other
 * gets `already_decided` (or `expired`) with what happened, and nothing changes.
 */
export class ClusterInbox {
  constructor(
    private readonly kv: Bucket,
    private readonly nodeId: string,
    /** Scrubs registered secrets from the error of a refused input (the store's redactor). */
    private readonly scrubber: StringScrubber,
    /**
     * Hears each resolution this node's own write made (a decision that won, an expiry it wrote):
     * of all nodes, exactly one hears each (at most once, should this node die right after).
     */
    private readonly resolvedHere: (approval: ApprovalRecord) => void = () => {},
  ) {}

  #won(record: InboxRecord): { ok: true; approval: ApprovalRecord } {
    const approval = approvalOf(record);
    this.resolvedHere(approval);
    return { ok: true, approval };
  }

  /** Refuses a decision whose inputs the store would refuse (RecordRejectedError, `invalid_input`). */
  checkDecision(id: string, decision: ApprovalDecision, user: string, now: number, reason?: string): void {
    checkDecisionInput('cluster inbox.decide', this.scrubber, id, decision, user, now, reason);
  }

  get(id: string): Promise<Versioned<InboxRecord> | null> {
    return readVersioned(this.kv, id, InboxRecord, 'inbox record');
  }

  /**
   * Publishes a pending approval (once per id: an existing record is returned unchanged).
   * `openedOn`: the node that parked the run on it (this one unless publishing for a dead node).
   */
  async open(approval: ApprovalRecord, openedOn: string = this.nodeId): Promise<Versioned<InboxRecord>> {
    const record: InboxRecord = {
      v: 1,
      approval: { ...approval, status: 'pending', decidedBy: null, decidedAt: null, decisionReason: null },
      status: 'pending',
      decidedBy: null,
      decidedAt: null,
      decisionReason: null,
      decidedOn: null,
      openedOn,
    };
    const revision = await createIfAbsent(this.kv, approval.id, record);
    if (revision !== null) return { value: record, revision };
    const existing = await this.get(approval.id);
    if (existing === null) return this.open(approval, openedOn);
    return existing;
  }

  /** A human decision, single use across the cluster. `now` is compared with the request's deadline. */
  async decide(
    id: string,
    decision: ApprovalDecision,
    user: string,
    now: number,
    reason?: string,
  ): Promise<DecideResult> {
    // What the store of the node that owns the run would refuse when it follows this decision
    // is refused here, before it is shared (else that node could never apply it).
    this.checkDecision(id, decision, user, now, reason);
    for (;;) {
      const current = await this.get(id);
      if (current === null) {
        return {
          ok: false,
          reason: 'not_found',
          message: `no approval request with id ${JSON.stringify(id)}`,
          approval: null,
        };
      }
      const rec = current.value;
      if (rec.status === 'pending' && now >= rec.approval.expiresAt) {
        const expired = await this.expire(id, now, current);
        if (expired === null) continue;
      } else if (rec.status === 'pending') {
        const next: InboxRecord = {
          ...rec,
          status: decision,
          decidedBy: user,
          decidedAt: now,
          decisionReason: reason ?? null,
          decidedOn: this.nodeId,
        };
        if ((await updateAt(this.kv, id, next, current.revision)) !== null) return this.#won(next);
        // Lost, or our own write whose reply was lost and whose retry was deduplicated: read again.
        const after = await this.get(id);
        if (after !== null && sameDecision(after.value, next)) return this.#won(next);
        continue;
      }
      const latest = (await this.get(id)) ?? current;
      const l = latest.value;
      // This very decision, written by an attempt whose reply was lost (a retry through a lost
      // quorum): it won, and is reported so, not as someone else's.
      if (
        l.status === decision &&
        sameDecision(l, {
          ...l,
          status: decision,
          decidedBy: user,
          decidedAt: now,
          decidedOn: this.nodeId,
          decisionReason: reason ?? null,
        })
      )
        return this.#won(l);
      if (l.status === 'expired') {
        return {
          ok: false,
          reason: 'expired',
          message: `approval ${id} expired at ${iso(l.approval.expiresAt)}; the decision was not recorded`,
          approval: approvalOf(l),
        };
      }
      return {
        ok: false,
        reason: 'already_decided',
        message: `approval ${id} was already ${l.status} by ${l.decidedBy ?? 'unknown'} at ${iso(l.decidedAt ?? 0)} through node ${l.decidedOn ?? 'unknown'}; this decision changed nothing`,
        approval: approvalOf(l),
      };
    }
  }

  /**
   * Expires a pending approval whose deadline has passed (CAS, so a decision that got in first
   * stays). Returns the record after the write, the unchanged record when it is not pending or not
   * due, or null when the CAS lost (read again).
   */
  async expire(id: string, now: number, current?: Versioned<InboxRecord>): Promise<InboxRecord | null> {
    const cur = current ?? (await this.get(id));
    if (cur === null) return null;
    if (cur.value.status !== 'pending' || now < cur.value.approval.expiresAt) return cur.value;
    const next: InboxRecord = { ...cur.value, status: 'expired', decidedAt: now, decidedOn: this.nodeId };
    if ((await updateAt(this.kv, id, next, cur.revision)) === null) return null;
    this.resolvedHere(approvalOf(next));
    return next;
  }
}
