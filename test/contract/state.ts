import { existsSync } from 'node:fs';
import { openLocalStore } from '../../runtime/control/local-store.ts';
import { resolveDbPath, type ApprovalRecord, type AuditEvent, type Store } from '../../store/index.ts';
import { call } from '../sidecar/client.ts';
import { eventually } from '../support/runtime.ts';
import type { SurfaceRuntime } from './drivers/types.ts';

/** Reads the state dir through a read-only store (as the CLI does, beside the running runtime). */
export function readState<T>(stateDir: string, read: (store: Store) => T): T | null {
  if (!existsSync(resolveDbPath({ stateDir }))) return null;
  const store = openLocalStore(stateDir, true);
  try {
    return read(store);
  } finally {
    store.close();
  }
}

/** A stored run's status, agent, surface and outcome. */
export interface RunState {
  readonly runId: string;
  readonly agentId: string;
  readonly surface: string;
  readonly status: string;
  readonly parentRunId: string | null;
  readonly outcome: { status: string; reason: string; text?: string } | null;
}

/** Every stored run. */
export function runs(stateDir: string): RunState[] {
  return (
    readState(stateDir, (s) =>
      s.snapshots.list().map((r) => {
        const ctx = (s.snapshots.get(r.runId)?.snapshot as { context?: { outcome?: RunState['outcome'] } })
          ?.context;
        return { ...r, outcome: ctx?.outcome ?? null };
      }),
    ) ?? []
  );
}

/** Waits until a stored run matches. */
export function findRun(stateDir: string, match: (r: RunState) => boolean, what: string, timeoutMs = 60_000) {
  return eventually(() => runs(stateDir).find(match), timeoutMs, what);
}

/** Waits until the run has one of the statuses (`completed`, `waiting_for_approval`, …). */
export function waitForStatus(
  stateDir: string,
  runId: string,
  statuses: readonly string[],
  timeoutMs = 60_000,
) {
  return findRun(
    stateDir,
    (r) => r.runId === runId && statuses.includes(r.status),
    `run ${runId} to be ${statuses.join('|')}`,
    timeoutMs,
  );
}

/** Every approval of a run (any status), oldest first. */
export function approvalsOf(stateDir: string, runId: string): ApprovalRecord[] {
  return (
    readState(stateDir, (s) =>
      s.audit
        .list({ runId })
        .filter((e) => e.kind === 'approval_requested' && e.callId !== null)
        .map((e) => {
          const id = e.callId as string;
          return s.approvals.getByCall(id.startsWith(`${runId}:`) ? id : `${runId}:${id}`);
        })
        .filter((a): a is ApprovalRecord => a !== null),
    ) ?? []
  );
}

/** Waits for the run's `n`-th approval request (1-based) to be pending; returns it. */
export function waitForApproval(
  stateDir: string,
  runId: string,
  n = 1,
  timeoutMs = 60_000,
): Promise<ApprovalRecord> {
  return eventually(
    () => {
      const all = approvalsOf(stateDir, runId);
      const a = all[n - 1];
      return a !== undefined && a.status === 'pending' ? a : undefined;
    },
    timeoutMs,
    `approval #${n} of run ${runId}`,
  );
}

/** The audit events of a run, in order. */
export function auditOf(stateDir: string, runId: string): AuditEvent[] {
  return readState(stateDir, (s) => s.audit.list({ runId })) ?? [];
}

/** The human's decision through the sidecar of the runtime (authenticated: the launcher's token). */
export async function decide(
  rt: SurfaceRuntime,
  approvalId: string,
  body: { decision: 'approve' | 'deny'; scope?: 'once' | 'session' | 'always'; reason?: string },
) {
  const { port, token } = rt.sidecar();
  return call(port, 'POST', `/v1/inbox/${encodeURIComponent(approvalId)}/decision`, {
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Denies with a reason (the model hears it as `tool.denied` and goes on); asserts it took. */
export async function denyWithReason(rt: SurfaceRuntime, approvalId: string, reason = 'not now') {
  const r = await decide(rt, approvalId, { decision: 'deny', reason });
  if (r.status !== 200) throw new Error(`deny ${approvalId}: HTTP ${r.status} ${r.text}`);
}

/** Approves once; asserts it took. */
export async function approveOnce(rt: SurfaceRuntime, approvalId: string) {
  const r = await decide(rt, approvalId, { decision: 'approve' });
  if (r.status !== 200) throw new Error(`approve ${approvalId}: HTTP ${r.status} ${r.text}`);
}
