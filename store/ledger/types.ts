import { z } from 'zod';
import { ToolRisk } from '../../policy/risk.ts';
import { anything, fastStrictObject, nullable, oneOf, optional, required } from '../fast-parse.ts';
import { FAST, Id, OptionalId, Text, Timestamp } from '../schema.ts';

/** States of a ledger row. `completed` and `failed` are final. */
export const CallStatus = {
  started: 'started',
  completed: 'completed',
  failed: 'failed',
  interrupted: 'interrupted',
} as const;
export type CallStatus = (typeof CallStatus)[keyof typeof CallStatus];

/** The record version of ledger rows this code writes. */
export const LEDGER_RECORD_VERSION = 1;

/** What `beginCall` needs: the idempotency key, the call's identity and its policy context. */
export const BeginCallInput = z.strictObject({
  /** The idempotency identity of the side effect; one ledger row per key. */
  idempotencyKey: Id,
  callId: Id,
  runId: OptionalId,
  sessionId: OptionalId,
  agentId: OptionalId,
  surface: OptionalId,
  tool: Id,
  risk: ToolRisk.nullable().optional(),
  ruleId: OptionalId,
  resource: Text.nullable().optional(),
  standingApprovalId: OptionalId,
  at: Timestamp.optional(),
  /** Extra data for the audit `started` event (redacted). */
  detail: z.unknown().optional(),
});
export type BeginCallInput = z.input<typeof BeginCallInput>;

/** A parsed BeginCallInput: every field present, in one fixed order (see fast-parse.ts). */
export type ParsedBeginCall = z.output<typeof BeginCallInput>;

/** The fast parser of BeginCallInput (fast-parse.ts); the property test keeps it equal to zod. */
export const fastBeginCallInput = fastStrictObject<z.output<typeof BeginCallInput>, ParsedBeginCall>(
  {
    idempotencyKey: required(FAST.id),
    callId: required(FAST.id),
    runId: optional(nullable(FAST.id)),
    sessionId: optional(nullable(FAST.id)),
    agentId: optional(nullable(FAST.id)),
    surface: optional(nullable(FAST.id)),
    tool: required(FAST.id),
    risk: optional(nullable(oneOf(ToolRisk.options))),
    ruleId: optional(nullable(FAST.id)),
    resource: optional(nullable(FAST.text)),
    standingApprovalId: optional(nullable(FAST.id)),
    at: optional(FAST.timestamp),
    detail: optional(anything),
  },
  () => ({
    idempotencyKey: '',
    callId: '',
    runId: undefined,
    sessionId: undefined,
    agentId: undefined,
    surface: undefined,
    tool: '',
    risk: undefined,
    ruleId: undefined,
    resource: undefined,
    standingApprovalId: undefined,
    at: undefined,
    detail: undefined,
  }),
);

/** Options of a `beginCall` or `retryInterrupted`. */
export interface BeginCallOptions {
  /**
   * fsync the `started` row before returning, so it survives power loss, not only a process
   * crash. For side effects that must not repeat and cannot be deduplicated downstream.
   */
  readonly durable?: boolean;
}

/** One ledger row, as read back. */
export interface LedgerEntry {
  readonly idempotencyKey: string;
  readonly callId: string;
  readonly runId: string | null;
  readonly sessionId: string | null;
  readonly agentId: string | null;
  readonly surface: string | null;
  readonly tool: string;
  readonly risk: ToolRisk | null;
  readonly ruleId: string | null;
  readonly resource: string | null;
  readonly standingApprovalId: string | null;
  readonly status: CallStatus;
  /** 1 for the first execution, +1 per `retryInterrupted`. */
  readonly attempt: number;
  /** The redacted result of a completed call, else null. */
  readonly result: unknown;
  /** The redacted error of a failed call, else null. */
  readonly error: unknown;
  readonly startedAt: number;
  readonly finishedAt: number | null;
}

/**
 * Outcome of `beginCall`: `created` when this call wrote the `started` row and may execute;
 * otherwise the existing row, which the caller must honour (reuse a completed result, never
 * execute twice).
 */
export type BeginCallResult =
  | { readonly created: true; readonly entry: LedgerEntry }
  | { readonly created: false; readonly entry: LedgerEntry };

/** The row shape of `tool_calls`. */
export interface LedgerRow {
  idempotency_key: string;
  v: number;
  call_id: string;
  run_id: string | null;
  session_id: string | null;
  agent_id: string | null;
  surface: string | null;
  tool: string;
  risk: string | null;
  rule_id: string | null;
  resource: string | null;
  standing_approval_id: string | null;
  status: CallStatus;
  attempt: number;
  result: string | null;
  error: string | null;
  started_at: number;
  finished_at: number | null;
}
