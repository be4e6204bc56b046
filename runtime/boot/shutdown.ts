import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_FILE } from '../runtime-file.ts';
import type { StateLock } from '../state-lock.ts';
import type { RuntimeParts } from './assemble.ts';
import type { Services } from './services.ts';

/**
 * Stops a started runtime, once, in the one order that loses nothing: no new work (timers,
 * schedules, goals, agents, the cluster's work), then the queue and the agents' connections,
 * live runs parked with their snapshots persisted, tools, approvals' deadlines, the control
 * socket, the cluster node, the bus and its server, the runtime file, the store, and last the
 * state dir's lock.
 */
export async function shutdown(
  p: RuntimeParts,
  services: Services | null,
  lock: StateLock | null,
): Promise<void> {
  if (p.lifecycle.stopped) return;
  p.lifecycle.stopped = true;
  p.lifecycle.abort.abort();
  services?.stopTimers();
  p.goals.stop();
  p.agents.stopActors();
  await p.cluster?.stopWork();
  await p.queue.stop();
  await p.agents.closeBuses();
  p.runs.stopAll();
  await p.tools?.close();
  p.approvals.stop();
  await services?.closeControl();
  await p.cluster?.close();
  await p.bus.close().catch(() => {});
  await p.nats?.stop();
  rmSync(join(p.loaded.config.stateDir, RUNTIME_FILE), { force: true });
  p.store.close();
  lock?.release();
}
