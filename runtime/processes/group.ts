/**
 * Signalling and ending whole process groups: every child runs as the leader of its own group,
 * so one signal to `-pgid` reaches it and every descendant that stayed in the group.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { hasProcfs, liveGroupMembers } from './procfs.ts';

/** Sends `signal` to every process of group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: members exist but belong to someone else; for our purposes the group is there.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether any process of group `pgid` is still running. Zombies do not count: a grandchild
 * orphaned to an init that does not reap stays a zombie forever but runs nothing.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (!hasProcfs()) return true;
  try {
    return (await liveGroupMembers(pgid)).length > 0;
  } catch {
    return true;
  }
}

async function waitGone(pgid: number, ms: number, pollMs: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    if (Date.now() >= until) return false;
    await delay(pollMs);
  }
}

/**
 * Ends process group `pgid`: SIGTERM, then SIGKILL after `graceMs` if anything of it still runs.
 * Resolves true once no member is running (checked for up to 2 s after the SIGKILL), false if
 * something survived (a process of another user, or one stuck in uninterruptible sleep).
 */
export async function killGroup(pgid: number, graceMs: number, pollMs = 25): Promise<boolean> {
  if (!signalGroup(pgid, 'SIGTERM')) return true;
  if (await waitGone(pgid, graceMs, pollMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGone(pgid, 2000, pollMs);
}
