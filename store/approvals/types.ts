import { z } from 'zod';
import { ReasonCode } from '../../policy/decision.ts';
import { ToolRisk } from '../../policy/risk.ts';
import { Id, OptionalId, Text, Timestamp } from '../schema.ts';

/** States of an approval request. Everything but `pending` is final. */
export const ApprovalStatus = {
  pending: 'pending',
  approved: 'approved',
  denied: 'denied',
  expired: 'expired',
} as const;
export type ApprovalStatus = (typeof ApprovalStatus)[keyof typeof ApprovalStatus];

/** What an Inbox item asks: to run one tool call, or to extend a run's budget once. */
export const ApprovalKind = z.enum(['tool', 'budget']);
export type ApprovalKind = z.infer<typeof ApprovalKind>;

/** Why a run asks for more budget: the budget it went past (the reason code it ends with when denied). */
export const BudgetReasonCode = z.enum([
  'budget_model_calls',
  'budget_tool_calls',
  'budget_tokens',
  'budget_cost',
  'budget_wall_time',
]);

/** Why an item is in the Inbox: the policy's reason for a tool call, the budget for a budget request. */
export const ApprovalReason = z.union([ReasonCode, BudgetReasonCode]);
export type ApprovalReason = z.infer<typeof ApprovalReason>;

/** What a human may decide. */
export const ApprovalDecision = z.enum(['approved', 'denied']);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** Why a human decided as they did (optional; a denial's reason is shown to the model). */
export const DecisionReason = z.string().min(1).max(1000);

/**
 * The record version of approval rows this code writes. Version 2 rows carry `argsHash` (and
 * `policyHash`): a version-2 row without one binds nothing and is never honoured.
 */
export const APPROVAL_RECORD_VERSION = 2;

/** A SHA-256 in lowercase hex. */
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex');

/** An approval request as created (DESIGN.md §7). `args` and `resumeCheckpoint` are redacted. */
export const CreateApprovalInput = z
  .strictObject({
    /** The request id; generated when absent. */
    id: Id.optional(),
    /** What the item asks (default `tool`); a `budget` item's `args` hold its budget request. */
    kind: ApprovalKind.optional(),
    /** The tool call awaiting the decision; one approval per call. */
    callId: Id,
    runId: OptionalId,
    sessionId: Id,
    /** The task or goal (automation) the call belongs to. */
    taskId: OptionalId,
    agentId: Id,
    parentAgentId: OptionalId,
    parentRunId: OptionalId,
    surface: OptionalId,
    tool: Id,
    args: z.unknown(),
    /** The resolved target (canonical path, URL, channel). */
    target: Text.nullable().optional(),
    risk: ToolRisk,
    reason: ApprovalReason,
    ruleId: Id,
    idempotencyKey: Id,
    /** SHA-256 of the call's RFC 8785-canonical arguments as proposed (before redaction). */
    argsHash: Sha256Hex.nullable().optional(),
    /** Hash of the policy-relevant config in force when the approval was requested. */
    policyHash: Sha256Hex.nullable().optional(),
    /** Whatever the runtime needs to resume the parked run (redacted JSON). */
    resumeCheckpoint: z.unknown().optional(),
    createdAt: Timestamp.optional(),
    expiresAt: Timestamp,
  })
  .refine((input) => input.createdAt === undefined || input.expiresAt > input.createdAt, {
    message: 'expiresAt must be after createdAt',
    path: ['expiresAt'],
  });
export type CreateApprovalInput = z.input<typeof CreateApprovalInput>;

/** A stored approval request. */
export interface ApprovalRecord {
  readonly id: string;
  readonly v: number;
  /** What the item asks: a tool call, or more budget for its run (`args` is then its budget request). */
  readonly kind: ApprovalKind;
  readonly callId: string;
  readonly runId: string | null;
  readonly sessionId: string;
  readonly taskId: string | null;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly parentRunId: string | null;
  readonly surface: string | null;
  readonly tool: string;
  readonly args: unknown;
  readonly target: string | null;
  readonly risk: ToolRisk;
  readonly reason: ApprovalReason;
  readonly ruleId: string;
  readonly idempotencyKey: string;
  readonly resumeCheckpoint: unknown;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly status: ApprovalStatus;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  /** The human's reason for the decision (redacted), or null. */
  readonly decisionReason: string | null;
  /** SHA-256 of the canonical arguments approved; null on rows written before binding (v1). */
  readonly argsHash: string | null;
  /** Hash of the policy-relevant config in force at the request; null on v1 rows. */
  readonly policyHash: string | null;
  /** The surface the decision came through (`cli`, `sidecar`, …), or null (undecided, v1 rows). */
  readonly decidedSurface: string | null;
  /** Cluster mode: the node the decision was made through; null on a single node. */
  readonly decidedNode: string | null;
}

/** Why a decision changed nothing. */
export type DecideFailure = 'already_decided' | 'expired' | 'not_found';

/** Outcome of `decide`: exactly one decision per approval ever returns `ok: true`. */
export type DecideResult =
  | { readonly ok: true; readonly approval: ApprovalRecord }
  | {
      readonly ok: false;
      readonly reason: DecideFailure;
      /** A sentence for the human: what happened before and when. */
      readonly message: string;
      /** The approval as stored, when it exists. */
      readonly approval: ApprovalRecord | null;
    };

/** Filters for pending approvals; all given ones must match. */
export interface PendingFilter {
  readonly sessionId?: string;
  readonly taskId?: string;
  readonly agentId?: string;
}

/** The row shape of `approvals`. */
export interface ApprovalRow {
  id: string;
  v: number;
  kind: ApprovalKind;
  call_id: string;
  run_id: string | null;
  session_id: string;
  task_id: string | null;
  agent_id: string;
  parent_agent_id: string | null;
  parent_run_id: string | null;
  surface: string | null;
  tool: string;
  args: string;
  target: string | null;
  risk: string;
  reason: string;
  rule_id: string;
  idempotency_key: string;
  resume_checkpoint: string | null;
  created_at: number;
  expires_at: number;
  status: ApprovalStatus;
  decided_by: string | null;
  decided_at: number | null;
  decision_reason: string | null;
  args_hash: string | null;
  policy_hash: string | null;
  decided_surface: string | null;
  decided_node: string | null;
}
