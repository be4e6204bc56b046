import { z } from 'zod';
import { Id, OptionalId, Text, Timestamp } from '../schema.ts';

/** The record version of session and standing approval rows this code writes. */
export const GRANT_RECORD_VERSION = 1;

/** A grant for one tool (and optionally one exact target) within one session. */
export const SessionGrantInput = z.strictObject({
  id: Id.optional(),
  sessionId: Id,
  tool: Id,
  /** One exact target, or null for every target of the tool in this session. */
  target: Text.nullable().optional(),
  grantedBy: Id,
  /**
   * The agent the grant was given to: it covers that agent's calls in the session only. Without
   * one the grant covers no agent's calls (it is listed and audited, nothing more).
   */
  agentId: OptionalId,
  /** Ties the grant to a run in the audit trail. */
  runId: OptionalId,
  createdAt: Timestamp.optional(),
});
export type SessionGrantInput = z.input<typeof SessionGrantInput>;

/** A stored session approval. */
export interface SessionApproval {
  readonly id: string;
  readonly sessionId: string;
  /** The agent whose calls it covers; null (a grant from before schema 9) covers none. */
  readonly agentId: string | null;
  readonly tool: string;
  readonly target: string | null;
  readonly grantedBy: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
}

/** A standing approval: one exact tool and one exact target, owned by one task or automation. */
export const StandingGrantInput = z.strictObject({
  id: Id.optional(),
  ownerTaskId: Id,
  tool: Id,
  target: Text.min(1),
  grantedBy: Id,
  createdAt: Timestamp.optional(),
});
export type StandingGrantInput = z.input<typeof StandingGrantInput>;

/** A stored standing approval. */
export interface StandingApproval {
  readonly id: string;
  readonly ownerTaskId: string;
  readonly tool: string;
  readonly target: string;
  readonly grantedBy: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
}

/** Who revokes, and when. */
export const RevokeInput = z.strictObject({
  revokedBy: Id,
  at: Timestamp.optional(),
});
export type RevokeInput = z.input<typeof RevokeInput>;
