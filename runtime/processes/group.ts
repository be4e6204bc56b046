/**
 * Signalling and ending whole process groups: every child runs as the leader of its own group,
 * so one signal to `-pgid` reaches it and every descendant that stayed in the group.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { hasProcfs, isLiveState, listProcesses, liveGroupMembers, type ProcStat } from './procfs.ts';

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
  if (hasProcfs() && leaderRunning(pgid) && signalGroup(pgid, 'SIGSTOP')) {
    try {
      await killEscapees(pgid, pollMs);
    } finally {
      // Stopped, the members take the SIGTERM once continued.
      signalGroup(pgid, 'SIGTERM');
      signalGroup(pgid, 'SIGCONT');
    }
  } else if (!signalGroup(pgid, 'SIGTERM')) return true;
  if (await waitGone(pgid, graceMs, pollMs)) return true;
  // What the group started during the grace period (a sandbox bwrap set up meanwhile) is swept
  // again before the SIGKILL, the group stopped so nothing new can start.
  if (hasProcfs() && signalGroup(pgid, 'SIGSTOP')) await killEscapees(pgid, pollMs).catch(() => {});
  signalGroup(pgid, 'SIGKILL');
  return waitGone(pgid, 2000, pollMs);
}

/** Whether the group's leader (the program itself, not yet reaped) still runs. */
function leaderRunning(pgid: number): boolean {
  try {
    process.kill(pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** How long the members of a stopped group may take to stop before the sweep goes on anyway. */
const STOP_WAIT_MS = 1000;

/**
 * Ends, with SIGKILL, every process descended from group `pgid` that left it: a bubblewrap
 * sandbox's own PID namespace (its init has a session of its own, `--new-session`; killing that
 * init ends the namespace) or a child that called `setsid`. The group is stopped first (SIGSTOP,
 * by the caller) and the sweep waits until its members are: a member in the middle of a `fork`
 * finishes it before it stops, so no child can appear after the scan. Bubblewrap binds its
 * sandbox to its own life (`--die-with-parent`) only once the sandbox is set up: a cancel in
 * between ended bwrap and left the sandboxed command running, its tree out of the group's reach.
 */
async function killEscapees(pgid: number, pollMs: number): Promise<void> {
  const until = Date.now() + STOP_WAIT_MS;
  let all = await listProcesses();
  const running = (p: ProcStat) =>
    p.pgrp === pgid && isLiveState(p.state) && p.state !== 'T' && p.state !== 't';
  while (all.some(running) && Date.now() < until) {
    await delay(pollMs);
    all = await listProcesses();
  }
  const members = new Set(all.filter((p) => p.pgrp === pgid).map((p) => p.pid));
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const escapees: number[] = [];
  const stack = [...members];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    for (const child of children.get(pid) ?? []) {
      if (members.has(child.pid)) continue;
      escapees.push(child.pid);
      stack.push(child.pid);
    }
  }
  for (const pid of escapees) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
