import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ApprovalRecord } from '../../store/index.ts';
import type { ClusterApproval } from './follower.ts';

/**
 * The cluster's Inbox as a cluster node last saw it, in its state dir (mode 0600): what
 * `snotra inbox list` shows there, as the CLI reads the state dir and not the cluster. Written by
 * the running node whenever the shared Inbox changes (its args are redacted, as every node's
 * store keeps them); removed by a boot on a single node. This module owns the format.
 */
export const CLUSTER_INBOX_FILE = 'cluster-inbox.json';

const FileShape = z.strictObject({
  v: z.literal(1),
  /** The node that wrote it. */
  nodeId: z.string().min(1),
  /** When it was written (the node's clock, ms). */
  at: z.number().int().nonnegative(),
  approvals: z.array(
    z.custom<ClusterApproval>(
      (a) =>
        typeof a === 'object' &&
        a !== null &&
        typeof (a as { id?: unknown }).id === 'string' &&
        (a as { status?: unknown }).status === 'pending',
      'a pending approval record',
    ),
  ),
});
export type ClusterInboxFile = z.infer<typeof FileShape>;

/** Writes the file atomically (a temp file renamed over it). */
export function writeClusterInbox(
  stateDir: string,
  nodeId: string,
  at: number,
  approvals: ClusterApproval[],
): void {
  const file = join(stateDir, CLUSTER_INBOX_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  const body: ClusterInboxFile = { v: 1, nodeId, at, approvals };
  writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Removes the file (a boot on a single node). */
export function removeClusterInbox(stateDir: string): void {
  rmSync(join(stateDir, CLUSTER_INBOX_FILE), { force: true });
}

/**
 * Reads the file: null when there is none. A file that is not valid is an error naming it
 * (never a crash of the caller's listing: the caller reports it).
 */
export function readClusterInbox(stateDir: string): ClusterInboxFile | null {
  const file = join(stateDir, CLUSTER_INBOX_FILE);
  if (!existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new Error(`${file}: the cluster Inbox file is not JSON`);
  }
  const parsed = FileShape.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file}: not a valid cluster Inbox file (${parsed.error.issues[0]?.message ?? 'invalid'})`,
    );
  return parsed.data;
}

/** Pending approvals matching a listing filter (session, task, agent). */
export function matchesFilter(
  a: ApprovalRecord,
  filter: { readonly sessionId?: string; readonly taskId?: string; readonly agentId?: string },
): boolean {
  return (
    (filter.sessionId === undefined || a.sessionId === filter.sessionId) &&
    (filter.taskId === undefined || a.taskId === filter.taskId) &&
    (filter.agentId === undefined || a.agentId === filter.agentId)
  );
}
