/**
 * The durable store (DESIGN.md §2, §3, §7, §10): SQLite (better-sqlite3, WAL) holding run
 * snapshots, the tool-call ledger, approvals and the Inbox, session and standing approvals, and
 * the hash-chained audit log, with every payload redacted before it is written.
 *
 * The database lives at `<stateDir>/snotra.db` (state dir `./.snotra` by default; see
 * `resolveDbPath`). Open it with `openStore({ path, redactor })`.
 */
export { openStore, SCHEMA_VERSION } from './open.ts';
export type { OpenStoreOptions } from './open.ts';
export { Store } from './store.ts';
export { DB_FILE_NAME, DEFAULT_STATE_DIR, resolveDbPath } from './paths.ts';
export type { DbLocation } from './paths.ts';
export type { TransactionOptions } from './durability.ts';

export {
  StoreError,
  StoreOpenError,
  RecordRejectedError,
  StoreStateError,
  OpenErrorCode,
  RecordErrorCode,
  StateErrorCode,
} from './errors.ts';
export type { StoreErrorCode, StringScrubber } from './errors.ts';

export { Redactor, DEFAULT_CENSOR } from './redaction/redactor.ts';
export type { RedactorOptions } from './redaction/redactor.ts';
export { createLogger } from './redaction/logger.ts';
export type { RedactedLoggerOptions } from './redaction/logger.ts';

export { AuditLog } from './audit/log.ts';
export type { AuditQuery } from './audit/log.ts';
export { AuditKind, AUDIT_KINDS, AUDIT_EVENT_VERSION } from './audit/types.ts';
export type { AuditEvent, AuditEventInput, AuditFields } from './audit/types.ts';
export { GENESIS_HASH } from './audit/chain.ts';
export type { ChainVerification, ChainBreak } from './audit/chain.ts';
export { auditFieldsFromDecision } from './audit/decision.ts';
export type { DecisionAuditFields } from './audit/decision.ts';

export { ToolCallLedger } from './ledger/ledger.ts';
export type { ExternalCall } from './ledger/external-calls.ts';
export type { LedgerTimeOptions } from './ledger/ledger.ts';
export { CallStatus } from './ledger/types.ts';
export type { BeginCallInput, BeginCallOptions, BeginCallResult, LedgerEntry } from './ledger/types.ts';

export { ScheduleJournal } from './schedule/journal.ts';
export type { FiringRecord, FiringStatus } from './schedule/journal.ts';

export { GoalStore } from './goals/goals.ts';
export type { BeginGoalInput, GoalStateFields } from './goals/goals.ts';
export { GOAL_STATUSES, GOAL_ACTIONS, FINAL_GOAL_STATUSES } from './goals/types.ts';
export type {
  ClaimRefusal,
  ClaimResult,
  GoalAction,
  GoalBudget,
  GoalControl,
  GoalRecord,
  GoalStatus,
  GoalUsage,
  IterationBudget,
  IterationRecord,
} from './goals/types.ts';
export {
  PlatformStore,
  DEFAULT_PAIRING_LIMITS,
  BadCursorError,
  MAX_UNDELIVERED_PAGE,
} from './platforms/index.ts';
export type {
  InboundRecord,
  InboundStatus,
  InboundUpdate,
  OutboundRecord,
  OutboundStatus,
  PartResult,
  UndeliveredPage,
  PairedChat,
  PairingLimits,
  IssueRefusal,
  ConfirmRefusal,
} from './platforms/index.ts';

export { SessionStore } from './sessions/sessions.ts';
export type { SessionCompaction } from './sessions/compactions.ts';
export { RunTraces, type RunTrace } from './traces/run-traces.ts';
export type {
  AppendRunInput,
  ClaimSessionResult,
  SessionEntry,
  SessionMeta,
  SessionRecord,
} from './sessions/types.ts';

export { ApprovalInbox } from './approvals/inbox.ts';
export { sqliteInboxBackend, type InboxBackend } from './approvals/inbox-backend.ts';
export { sqliteClaimBackend } from './ledger/claim-backend.ts';
export type { ClaimBackend, ClaimCall, ClaimState, ClaimView } from './ledger/claim-backend.ts';
export { checkDecisionInput } from './approvals/decision-input.ts';
export { ApprovalStatus } from './approvals/types.ts';
export type {
  ApprovalDecision,
  ApprovalKind,
  ApprovalReason,
  ApprovalRecord,
  CreateApprovalInput,
  DecideFailure,
  DecideResult,
  PendingFilter,
} from './approvals/types.ts';

export { SessionApprovals } from './grants/session.ts';
export { StandingApprovals } from './grants/standing.ts';
export type {
  RevokeInput,
  SessionApproval,
  SessionGrantInput,
  StandingApproval,
  StandingGrantInput,
} from './grants/types.ts';

export { RunSnapshots } from './snapshots/store.ts';
export type { PutSnapshotInput, RunFilter, RunSummary, VersionedSnapshot } from './snapshots/store.ts';
export { sqliteRunRecordBackend } from './snapshots/run-record-backend.ts';
export type { RunRecordBackend, VersionedRun } from './snapshots/run-record-backend.ts';
export { checkRevision, checkRunRecord } from './snapshots/record-input.ts';
export {
  parseRunSnapshot,
  RunStatus,
  SNAPSHOT_SCHEMA_VERSION,
  SUPPORTED_SNAPSHOT_VERSIONS,
  MAX_SNAPSHOT_BYTES,
} from './snapshots/format.ts';
export type { RunSnapshot } from './snapshots/format.ts';

export type { GroupSyncStats, SyncFile } from './group-sync.ts';
