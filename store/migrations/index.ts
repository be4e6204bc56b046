import { initial } from './001-initial.ts';
import { restoreIndexes } from './002-restore-indexes.ts';
import { compactHotPath } from './003-compact-hot-path.ts';
import { scheduleJournal } from './004-schedule-journal.ts';
import { approvalDecisionReason } from './005-approval-decision-reason.ts';
import { goals } from './006-goals.ts';
import { platforms } from './007-platforms.ts';
import { compactEncoding } from './008-compact-encoding.ts';
import { sessionGrantAgent } from './009-session-grant-agent.ts';
import { pendingApprovalsOfRun } from './010-pending-approvals-of-run.ts';
import { dropUnusedApprovalIndexes } from './011-drop-unused-approval-indexes.ts';
import { unfinishedRunsIndex } from './012-unfinished-runs-index.ts';
import { sessions } from './013-sessions.ts';
import { approvalKind } from './014-approval-kind.ts';
import { approvalBinding } from './015-approval-binding.ts';
import { sessionCompactions } from './016-session-compactions.ts';
import { runTraces } from './017-run-traces.ts';
import { usageOfGoalsAndCompactions } from './018-usage-of-goals-and-compactions.ts';
import { externalCallsIndex } from './019-external-calls-index.ts';
import { unkeptCompactionCalls } from './020-unkept-compaction-calls.ts';
import { runSnapshotRevision } from './021-run-snapshot-revision.ts';
import type { Migration } from './migration.ts';

export type { Migration } from './migration.ts';

/** Every migration in order; the last one's version is the current schema version. */
export const MIGRATIONS: readonly Migration[] = [
  initial,
  restoreIndexes,
  compactHotPath,
  scheduleJournal,
  approvalDecisionReason,
  goals,
  platforms,
  compactEncoding,
  sessionGrantAgent,
  pendingApprovalsOfRun,
  dropUnusedApprovalIndexes,
  unfinishedRunsIndex,
  sessions,
  approvalKind,
  approvalBinding,
  sessionCompactions,
  runTraces,
  usageOfGoalsAndCompactions,
  externalCallsIndex,
  unkeptCompactionCalls,
  runSnapshotRevision,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/**
 * The SQLite `application_id` stamped into every Snotra database ("SNOT" in ASCII), so a
 * foreign SQLite file is refused instead of being migrated.
 */
export const APPLICATION_ID = 0x534e4f54;
