import { z } from 'zod';
import { ToolRisk } from '../../policy/risk.ts';
import { anything, fastStrictObject, nullable, oneOf, optional, required, str } from '../fast-parse.ts';
import { FAST, OptionalId, Text, Timestamp } from '../schema.ts';

/**
 * The kinds of audit event. A tool call's lifecycle is `proposed → policy_decided →
 * approval_requested → approval_resolved → started → completed | failed | interrupted` (the
 * approval steps only when one was needed); grants, revokes and root changes have their own.
 */
export const AuditKind = {
  proposed: 'proposed',
  policyDecided: 'policy_decided',
  approvalRequested: 'approval_requested',
  approvalResolved: 'approval_resolved',
  started: 'started',
  completed: 'completed',
  failed: 'failed',
  interrupted: 'interrupted',
  sessionApprovalGranted: 'session_approval_granted',
  sessionApprovalRevoked: 'session_approval_revoked',
  standingApprovalGranted: 'standing_approval_granted',
  standingApprovalRevoked: 'standing_approval_revoked',
  rootChanged: 'root_changed',
  /** An agent's mode changed while it ran (live narrowing of its descendants). */
  modeChanged: 'mode_changed',
  /** A sub-agent was spawned; `detail` holds what its request asked for and what was narrowed. */
  agentSpawned: 'agent_spawned',
  /** A run ended failed; `detail` holds its reason code and message (redacted). */
  runFailed: 'run_failed',
  /** A local user paired a messaging platform chat (`detail`: platform, chat, by whom). */
  platformPaired: 'platform_paired',
  /** A local user unpaired a platform chat. */
  platformUnpaired: 'platform_unpaired',
  /** A platform reply part was cut mid-send by a crash: it may or may not have arrived, and is not resent. */
  platformReplyUnknown: 'platform_reply_unknown',
  /** The bus server refused an actor's publish or subscription (per-actor auth; `detail`: operation, subject, actor). */
  busPermissionDenied: 'bus_permission_denied',
  /**
   * Cluster mode: a call of a run this node took over had been made by another node (`status`:
   * its outcome there, `completed`, `failed` or `interrupted` when that node died mid-call;
   * `detail.node`: the node). Written instead of `started`: this node did not run it.
   */
  callElsewhere: 'call_elsewhere',
  /** Cluster mode: this node took a run over from another node (`detail`: from, why, the run's status then). */
  runTakenOver: 'run_taken_over',
  /**
   * The executor refused to run an approved (or standing-approved) call: the arguments it was
   * about to run are not the ones approved (`status`: `approval_args_mismatch`; `detail`: the
   * approval or grant, the expected and the actual hash or target). Nothing ran.
   */
  callRefused: 'call_refused',
  /**
   * A human rewound read-write roots to a checkpoint (`detail`: checkpoint, the undo checkpoint
   * taken just before, who, the changes by kind and their paths, how many external calls since
   * were not rewindable).
   */
  rewind: 'rewind',
  /**
   * A session's older entries were summarized by its agent's model (`detail`: throughSeq, how
   * many entries, the summary's length, the tokens used). The entries stay in the store.
   */
  sessionCompacted: 'session_compacted',
} as const;
export type AuditKind = (typeof AuditKind)[keyof typeof AuditKind];

/** Every audit kind, for validation and exhaustive listings. */
export const AUDIT_KINDS: readonly AuditKind[] = Object.values(AuditKind);

/** The record version of audit events this code writes (stored per row as `v`). */
export const AUDIT_EVENT_VERSION = 1;

/** The identifying fields of an audit event; all optional, since not every kind has each. */
export const AuditFields = z.strictObject({
  sessionId: OptionalId,
  agentId: OptionalId,
  surface: OptionalId,
  runId: OptionalId,
  callId: OptionalId,
  tool: OptionalId,
  risk: ToolRisk.nullable().optional(),
  /** The id of the policy rule that matched (Decision.rule.id). */
  ruleId: OptionalId,
  /** The resolved resource: a canonical path, URL or channel (redacted before storing). */
  resource: Text.nullable().optional(),
  /** A short status word: the decision kind, `approved`, `denied`, `expired`, `completed`… */
  status: z.string().min(1).max(64).nullable().optional(),
  standingApprovalId: OptionalId,
});
export type AuditFields = z.input<typeof AuditFields>;

/** What a caller gives to append an event. `detail` is any data; it is redacted before storing. */
export const AuditEventInput = AuditFields.extend({
  kind: z.enum(AUDIT_KINDS as [AuditKind, ...AuditKind[]]),
  at: Timestamp.optional(),
  detail: z.unknown().optional(),
});
export type AuditEventInput = z.input<typeof AuditEventInput>;

/**
 * An event as the store writes it: every field present, in one fixed order (undefined or null
 * when absent), so the code that hashes and inserts events reads a single object shape. Build
 * one with `newAuditRecord` and set the fields it has.
 */
export interface AuditRecord {
  kind: AuditKind;
  /** Milliseconds since the epoch; the store clock when undefined. */
  at: number | undefined;
  sessionId: string | null | undefined;
  agentId: string | null | undefined;
  surface: string | null | undefined;
  runId: string | null | undefined;
  callId: string | null | undefined;
  tool: string | null | undefined;
  risk: ToolRisk | null | undefined;
  ruleId: string | null | undefined;
  resource: string | null | undefined;
  status: string | null | undefined;
  standingApprovalId: string | null | undefined;
  detail: unknown;
}

/** A record of `kind` with no identifying field set yet (the one place its shape is made). */
export function newAuditRecord(kind: AuditKind, at: number | undefined, detail?: unknown): AuditRecord {
  return {
    kind,
    at,
    sessionId: undefined,
    agentId: undefined,
    surface: undefined,
    runId: undefined,
    callId: undefined,
    tool: undefined,
    risk: undefined,
    ruleId: undefined,
    resource: undefined,
    status: undefined,
    standingApprovalId: undefined,
    detail,
  };
}

/** The fast parser of AuditEventInput (fast-parse.ts); the property test keeps it equal to zod. */
export const fastAuditEventInput = fastStrictObject<z.output<typeof AuditEventInput>, AuditRecord>(
  {
    sessionId: optional(nullable(FAST.id)),
    agentId: optional(nullable(FAST.id)),
    surface: optional(nullable(FAST.id)),
    runId: optional(nullable(FAST.id)),
    callId: optional(nullable(FAST.id)),
    tool: optional(nullable(FAST.id)),
    risk: optional(nullable(oneOf(ToolRisk.options))),
    ruleId: optional(nullable(FAST.id)),
    resource: optional(nullable(FAST.text)),
    status: optional(nullable(str(1, 64))),
    standingApprovalId: optional(nullable(FAST.id)),
    kind: required(oneOf(AUDIT_KINDS)),
    at: optional(FAST.timestamp),
    detail: optional(anything),
  },
  () => newAuditRecord(undefined as unknown as AuditKind, undefined),
);

/** A stored audit event, as read back. */
export interface AuditEvent {
  /** Position in the log, 1-based and contiguous: the event's id. */
  readonly seq: number;
  /** Record version. */
  readonly v: number;
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly kind: AuditKind;
  readonly sessionId: string | null;
  readonly agentId: string | null;
  readonly surface: string | null;
  readonly runId: string | null;
  readonly callId: string | null;
  readonly tool: string | null;
  readonly risk: ToolRisk | null;
  readonly ruleId: string | null;
  readonly resource: string | null;
  readonly status: string | null;
  readonly standingApprovalId: string | null;
  /** The redacted detail. */
  readonly detail: unknown;
  /** Hash of the previous event (64 zeros for the first). */
  readonly prevHash: string;
  /** sha256 of `prevHash` and this event's canonical content. */
  readonly hash: string;
}

/** The row shape of `audit_events`. */
export interface AuditRow {
  seq: number;
  v: number;
  at: number;
  kind: string;
  session_id: string | null;
  agent_id: string | null;
  surface: string | null;
  run_id: string | null;
  call_id: string | null;
  tool: string | null;
  risk: string | null;
  rule_id: string | null;
  resource: string | null;
  status: string | null;
  standing_approval_id: string | null;
  detail: string;
  prev_hash: string;
  hash: string;
}
