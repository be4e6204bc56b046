import type { ApprovalRecord, FiringRecord } from '../../store/index.ts';
import type { StartRun } from '../agents/agent-pool.ts';
import { publishResolved } from '../approvals/resolved-on-bus.ts';
import { startControlSocket } from '../control/socket.ts';
import { RESUME_CONCURRENCY, RESUME_SLOT_MS, resumeBounded, type BootResume } from '../runs/boot-resume.ts';
import { Scheduler } from '../scheduler.ts';
import type { TimerHandle } from '../time/clock.ts';
import type { RuntimeParts } from './assemble.ts';

/** How long a recorded firing whose run does not exist yet counts as on its way (then as lost). */
const FIRING_START_GRACE_MS = 5 * 60_000;

/**
 * Brings a runtime's work back and starts what runs on its own: calls cut by a crash are marked
 * interrupted, the agents start consuming, pending approvals are re-armed, unfinished runs come
 * back (bounded), the control socket, the decision sync and the schedules start, goals (their
 * runs were restored; requests made while down are applied now), and last the cluster's work.
 * Each pushes its teardown on the runtime's lifecycle as it starts (see `shutdown`).
 */
export async function startServices(
  parts: RuntimeParts,
  syncIntervalMs: number,
  startTask: (agentId: string, taskId: string, text: string, messageId: string) => Promise<unknown>,
): Promise<void> {
  const { store, loaded, inspector, approvals, runs, clock, logger, goals, lifecycle, cluster, feed } = parts;
  // Calls cut by a crash: never silently re-run (see executeOnce).
  store.ledger.markInterrupted();
  const startRun: StartRun = (agentId, message, runId) => parts.router.startRun(agentId, message, runId);
  // Their consumers end with the queue; a message that comes while stopping is left for the next start.
  lifecycle.onStop('agents', async () => {
    parts.agents.stopActors();
    await parts.queue.stop();
  });
  for (const agentId of Object.keys(loaded.config.agents)) parts.agents.start(agentId, startRun);
  inspector.seedGoals(loaded.config.surfaces.goalLoops, store);
  const pending = store.approvals.listPending();
  inspector.seed(store, pending);
  approvals.rearm(pending);
  void resumeBounded(
    bootResumes(parts, pending),
    RESUME_CONCURRENCY,
    (runId) => runs.whenSettled(runId),
    () => lifecycle.stopped,
    (runId, err) => logger.error({ runId, err: (err as Error).message }, 'run not restored at boot'),
    RESUME_SLOT_MS,
    clock,
  );
  const redact = <T>(v: T): T => store.redactor.redact(v) as T;
  const control = await startControlSocket(
    loaded.config.stateDir,
    (m) => (m.type === 'goal_control' ? goals.applyControls() : approvals.sync(m.id)),
    {
      actors: {
        snapshot: () => redact(inspector.snapshot()),
        on: (l) => inspector.on((e) => l(redact(e))),
      },
    },
  );
  lifecycle.onStop('control socket', () => control.close());
  // The runtime's clock ends it once the store is closed (see `guardTimers`); an error is
  // logged here, naming what failed.
  const syncTimer: TimerHandle = clock.setInterval(() => {
    try {
      approvals.syncAll();
      goals.applyControls();
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'approval and goal sync failed');
    }
  }, syncIntervalMs);
  // Its teardown is on the stack before anything below can fail the boot (a bad cron makes the
  // Scheduler throw): left armed, it went on syncing a closed store every second.
  lifecycle.onStop('sync timer', () => clock.clearInterval(syncTimer));
  const scheduler = new Scheduler(loaded.config.surfaces.scheduled, {
    journal: store.schedule,
    clock,
    start: async (task, messageId) => {
      await startTask(task.agent, task.id, task.message, messageId);
    },
    runActive: (firing) => firingActive(parts, firing),
    log: (level, fields, msg) => logger[level](fields, msg),
  });
  lifecycle.onStop('scheduler', () => scheduler.stop());
  scheduler.start();
  // Goals after the runs they drive were restored; requests made while down are applied now.
  lifecycle.onStop('goals', () => goals.stop());
  goals.start();
  // Cluster mode: failover and the shared work queue, once this node's own runs are back.
  if (cluster !== null) {
    lifecycle.onStop('cluster work', () => cluster.stopWork());
    await cluster.attach({
      store,
      runs,
      approvals,
      feed,
      approvalResolvedOnBus: (a, trace) =>
        publishResolved(parts.bus, a, (a.runId === null ? null : parts.traceOf(a.runId)) ?? trace),
    });
  }
}

/**
 * The runs to bring back at boot: every unfinished run except those parked on a pending
 * approval. A parked run is loaded lazily: it stays listed, in the Inbox and on its approval's
 * deadline (re-armed above), and its snapshot is read only when its decision, expiry or a
 * cancel arrives (`RunHost.deliver` / `cancel` restore it then). A run waiting on an approval
 * decided while the runtime was down gets its decision delivered; interrupted runs are restored.
 */
function bootResumes(parts: RuntimeParts, pending: readonly ApprovalRecord[]): BootResume[] {
  const { store, runs, cluster, feed } = parts;
  const pendingRuns = new Set<string>();
  for (const a of pending) if (a.runId !== null) pendingRuns.add(a.runId);
  const items: BootResume[] = [];
  for (const run of store.snapshots.listUnfinished()) {
    // Cluster mode: a run another node took over stays with that node.
    if (cluster !== null && !cluster.mayRestore(run.runId)) continue;
    if (run.status !== 'waiting_for_approval') {
      items.push({ runId: run.runId, go: () => runs.restore(run.runId) });
      continue;
    }
    // A run waits on one approval at a time (its id is derived from the run and the call):
    // a pending one means the run stays parked until a decision, unloaded.
    if (pendingRuns.has(run.runId)) continue;
    items.push({
      runId: run.runId,
      go: () => {
        const ctx = runs.contextOf(run.runId);
        const approval = ctx?.approvalId ? store.approvals.get(ctx.approvalId) : null;
        if (approval === null || approval.status === 'pending') return false;
        feed.approvalResolved(approval);
        runs.deliver(approval);
        return true;
      },
    });
  }
  return items;
}

/** Whether a scheduled firing's run still goes on (or is on its way: recorded, not yet created). */
function firingActive(parts: RuntimeParts, firing: FiringRecord): boolean {
  if (firing.runId === null) return false;
  if (parts.runs.isLive(firing.runId)) return true;
  const status = parts.store.snapshots.get(firing.runId)?.status;
  if (status === undefined) return parts.clock.now() - firing.recordedAt < FIRING_START_GRACE_MS;
  return status !== 'completed' && status !== 'failed' && status !== 'denied';
}
