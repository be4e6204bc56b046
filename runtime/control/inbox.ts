import { existsSync, readFileSync } from 'node:fs';
import { storedContext } from '../runs/stored-run.ts';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_FILE } from '../runtime-file.ts';
import { matchesFilter, readClusterInbox } from '../cluster/inbox-file.ts';
import type {
  FiringRecord,
  ApprovalDecision,
  ApprovalRecord,
  DecideResult,
  PendingFilter,
  RunSummary,
} from '../../store/index.ts';

export type { ApprovalRecord, RunSummary };
import { descendsFrom } from './ancestry.ts';
import { openLocalStore, runtimePid } from './local-store.ts';
import { notifyRuntime } from './socket.ts';

/** A decision refused because it came from a process the runtime started (an agent's shell). */
export class AgentDecisionError extends Error {
  readonly code = 'decision_from_agent_process';
}

/**
 * A decision refused because the state dir belongs to a cluster node: one written to its local
 * store would not be single use across the cluster.
 */
export class ClusterDecisionError extends Error {
  readonly code = 'decide_through_cluster';
}

/** The node id when `stateDir` belongs to a cluster node (its runtime wrote `CLUSTER_FILE`). */
export function clusterNodeOf(stateDir: string): string | null {
  const file = join(stateDir, CLUSTER_FILE);
  if (!existsSync(file)) return null;
  try {
    const id = (JSON.parse(readFileSync(file, 'utf8')) as { nodeId?: unknown }).nodeId;
    return typeof id === 'string' ? id : '(unknown node)';
  } catch {
    return '(unreadable node file)';
  }
}

/**
 * Pending approvals of a state dir, optionally by session, task or agent. In a cluster node's
 * state dir: the cluster's Inbox as the node last saw it (every node's pending approvals, each
 * with the `node` that parked it), plus this node's own not yet in it.
 */
export function listPending(
  stateDir: string,
  filter: PendingFilter = {},
): Array<ApprovalRecord & { node?: string | null }> {
  const store = openLocalStore(stateDir, true);
  let local: ApprovalRecord[];
  try {
    local = store.approvals.listPending(filter);
  } finally {
    store.close();
  }
  const nodeId = clusterNodeOf(stateDir);
  if (nodeId === null) return local;
  const shared = readClusterInbox(stateDir);
  if (shared === null) return local.map((a) => ({ ...a, node: nodeId }));
  const known = new Set(shared.approvals.map((a) => a.id));
  return [
    ...shared.approvals.filter((a) => matchesFilter(a, filter)),
    ...local.filter((a) => !known.has(a.id)).map((a) => ({ ...a, node: nodeId })),
  ].sort((a, b) => a.createdAt - b.createdAt);
}

/** One approval (any status), or null; in a cluster node's state dir also a pending one parked elsewhere. */
export function showApproval(stateDir: string, id: string): ApprovalRecord | null {
  const store = openLocalStore(stateDir, true);
  let local: ApprovalRecord | null;
  try {
    local = store.approvals.get(id);
  } finally {
    store.close();
  }
  if (local !== null || clusterNodeOf(stateDir) === null) return local;
  return readClusterInbox(stateDir)?.approvals.find((a) => a.id === id) ?? null;
}

/**
 * Decides an approval as the local user (the CLI surface). Refused when this process descends
 * from the runtime (an agent's shell command). The decision is written to the store (single use,
 * atomic); then the running runtime, if any, is told to look. Returns the store's verdict and
 * whether a runtime was notified (when none runs, it resumes the run at its next start). A
 * denial's `reason` is stored with it and reaches the model.
 */
export async function decideAsLocalUser(
  stateDir: string,
  id: string,
  decision: ApprovalDecision,
  reason?: string,
): Promise<{ result: DecideResult; notified: boolean; user: string }> {
  const node = clusterNodeOf(stateDir);
  if (node !== null) {
    throw new ClusterDecisionError(
      `${stateDir} is the state dir of cluster node ${node}: decide through a node's sidecar ` +
        '(POST /v1/inbox/<id>/decision) or the runtime API, where a decision is single use across the cluster',
    );
  }
  const pid = runtimePid(stateDir);
  if (pid !== null && descendsFrom(pid)) {
    throw new AgentDecisionError(
      'approvals cannot be decided from a process started by the runtime (an agent’s tool)',
    );
  }
  const user = `local:${userInfo().username}`;
  const store = openLocalStore(stateDir, false);
  let result: DecideResult;
  try {
    result = store.approvals.decide(id, decision, user, undefined, reason);
  } finally {
    store.close();
  }
  const notified = result.ok ? await notifyRuntime(stateDir, { v: 1, type: 'approval_decided', id }) : false;
  return { result, notified, user };
}

/** Runs of a state dir (newest first as the store lists them). */
export function listRuns(stateDir: string): RunSummary[] {
  const store = openLocalStore(stateDir, true);
  try {
    return store.snapshots.list();
  } finally {
    store.close();
  }
}

/** The most recent scheduler firings (newest first), of one task or all: started or skipped, and why. */
export function listFirings(stateDir: string, taskId: string | null, limit: number): FiringRecord[] {
  const store = openLocalStore(stateDir, true);
  try {
    return store.schedule.list(taskId, limit);
  } finally {
    store.close();
  }
}

/** One run's summary and its stored context (redacted), or null. */
export function showRun(stateDir: string, runId: string): { summary: RunSummary; context: unknown } | null {
  const store = openLocalStore(stateDir, true);
  try {
    const stored = store.snapshots.get(runId);
    if (stored === null) return null;
    const summary = store.snapshots.list().find((r) => r.runId === runId);
    if (summary === undefined) return null;
    return { summary, context: storedContext(stored) };
  } finally {
    store.close();
  }
}
