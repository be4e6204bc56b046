/**
 * `snotra rewind` on a state dir: the checkpoints with what changed since each, and the rewind
 * itself — a human's action (refused from a process the runtime started), audited as `rewind`,
 * with the calls since the checkpoint whose effects left the machine listed as not rewindable.
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolveDbPath, type Store } from '../../store/index.ts';
import {
  listCheckpoints,
  rewindTo,
  type CheckpointFilter,
  type CheckpointSummary,
  type RewindReport,
} from '../checkpoints/index.ts';
import { acquireStateLock, StateDirLockedError, type StateLock } from '../state-lock.ts';
import { systemClock } from '../time/clock.ts';
import { descendsFrom } from './ancestry.ts';
import { clusterNodeOf } from './inbox.ts';
import { openLocalStore, runtimePid } from './local-store.ts';

/** A call since a checkpoint whose effect left the machine: a rewind cannot take it back. */
export interface ExternalEffect {
  readonly runId: string | null;
  readonly callId: string | null;
  readonly tool: string;
  /** What it reached: a URL, a channel, an MCP server's target (redacted as stored). */
  readonly target: string | null;
  readonly at: number;
  /** `completed`, or `started` when it may or may not have happened (cut by a crash). */
  readonly status: string;
}

/** A rewind as the CLI reports it. */
export interface RewindOutcome extends RewindReport {
  readonly notRewindable: readonly ExternalEffect[];
  readonly user: string;
}

/** Raised when a rewind is asked from a process the runtime started (an agent's tool). */
export class AgentRewindError extends Error {
  readonly code = 'rewind_from_agent';
}

/**
 * A rewind refused on a cluster node: another node's live run on the same root is not visible to
 * this one (run records are mirrored after the fact and no lock spans the nodes), so the restore
 * could write under that run's command.
 */
export class RewindInClusterError extends Error {
  readonly code = 'rewind_in_cluster';
  constructor(readonly nodeId: string) {
    super(
      `rewind refused: state dir of cluster node ${nodeId}; a live run of another node on the same root would not be seen (no lock spans the nodes), so the restore could write under its command. A dry run still shows the diff; rewind once no node runs on the root, from this state dir started as a single node`,
    );
    this.name = 'RewindInClusterError';
  }
}

/**
 * Raised when the CLI would rewind a state dir a runtime holds without serving a join socket (a
 * runtime embedded in `snotra run`, `snotra chat` or an app): its live runs are not visible to the
 * CLI, so the restore could write under their commands.
 */
export class RewindBusyError extends Error {
  readonly code = 'rewind_blocked_by_runtime';
  constructor(stateDir: string, holderPid: number | null) {
    super(
      `rewind refused: a Snotra runtime${holderPid === null ? '' : ` (pid ${holderPid})`} runs on state dir ${stateDir} and serves no join socket, so its live runs cannot be checked; rewind from inside it (the chat's /rewind) or once it has stopped (a dry run still shows the diff)`,
    );
    this.name = 'RewindBusyError';
  }
}

/**
 * The state dir's lock, held by the CLI for the length of a rewind so no runtime starts (or runs
 * a call) on it meanwhile; `RewindBusyError` when a runtime holds it already.
 */
function holdStateDir(stateDir: string): StateLock {
  try {
    return acquireStateLock(stateDir);
  } catch (err) {
    if (err instanceof StateDirLockedError) throw new RewindBusyError(stateDir, err.holderPid);
    throw err;
  }
}

/** External calls started since `at`, from the ledger (none when there is no database). */
export function externalEffectsSince(stateDir: string, at: number): ExternalEffect[] {
  if (!existsSync(resolveDbPath({ stateDir }))) return [];
  const store = openLocalStore(stateDir, true);
  try {
    return externalEffectsIn(store, at);
  } finally {
    store.close();
  }
}

/**
 * The external calls started since `at` (one per call, its last state), read from the ledger's
 * index of external calls: a rewind reads what it lists, never the whole audit log.
 */
export function externalEffectsIn(store: Pick<Store, 'externalCalls'>, at: number): ExternalEffect[] {
  return store.externalCalls.since(at).map((c) => ({
    runId: c.runId,
    callId: c.callId,
    tool: c.tool,
    target: c.resource,
    at: c.startedAt,
    status: c.status === 'completed' ? 'completed' : 'started',
  }));
}

/** Appends the audit event `rewind` of a rewind done by `user` through `surface`. */
export function auditRewind(
  store: Pick<Store, 'audit'>,
  report: RewindReport,
  who: { readonly user: string; readonly surface: string },
  notRewindable: number,
): void {
  const counts: Record<string, number> = {};
  for (const c of report.changes) counts[c.change] = (counts[c.change] ?? 0) + 1;
  store.audit.append({
    kind: 'rewind',
    surface: who.surface,
    sessionId: report.checkpoint.sessionId,
    runId: report.checkpoint.runId,
    callId: report.checkpoint.callId,
    status: 'restored',
    resource: report.checkpoint.roots
      .map((r) => r.path)
      .join(', ')
      .slice(0, 4000),
    detail: {
      checkpoint: report.checkpoint.id,
      undo: report.undo,
      by: who.user,
      changes: counts,
      paths: report.changes.slice(0, 200).map((c) => ({ root: c.root, path: c.path, change: c.change })),
      notRewindable,
    },
  });
}

/** The checkpoints of a state dir, oldest first, with what changed since each. */
export function rewindList(stateDir: string, filter: CheckpointFilter): CheckpointSummary[] {
  return listCheckpoints(stateDir, filter, () => systemClock.now());
}

/**
 * Rewinds to checkpoint `id` as the local user (`dryRun`: only the diff). The rewind is audited
 * (`rewind`, with the undo checkpoint and what changed) when the state dir has a database. It
 * holds the state dir's lock while it restores: refused (`rewind_blocked_by_runtime`) while a
 * runtime holds it, and (`rewind_in_cluster`) on a cluster node's state dir.
 */
export function rewindCheckpoint(stateDir: string, id: string, options: { dryRun: boolean }): RewindOutcome {
  const pid = runtimePid(stateDir);
  if (pid !== null && descendsFrom(pid))
    throw new AgentRewindError(
      'a rewind cannot be made from a process started by the runtime (an agent’s tool)',
    );
  const user = `local:${userInfo().username}`;
  if (options.dryRun) {
    const report = rewindTo(stateDir, id, { dryRun: true, now: () => systemClock.now() });
    return { ...report, notRewindable: externalEffectsSince(stateDir, report.checkpoint.at), user };
  }
  const node = clusterNodeOf(stateDir);
  if (node !== null) throw new RewindInClusterError(node);
  const lock = holdStateDir(stateDir);
  try {
    const report = rewindTo(stateDir, id, { dryRun: false, now: () => systemClock.now() });
    const notRewindable = externalEffectsSince(stateDir, report.checkpoint.at);
    if (existsSync(resolveDbPath({ stateDir }))) {
      const store = openLocalStore(stateDir, false);
      try {
        auditRewind(store, report, { user, surface: 'cli' }, notRewindable.length);
      } finally {
        store.close();
      }
    }
    return { ...report, notRewindable, user };
  } finally {
    lock.release();
  }
}
