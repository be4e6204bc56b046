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
  let tree: ProcStat[] = [];
  if (hasProcfs() && leaderRunning(pgid) && signalGroup(pgid, 'SIGSTOP')) {
    try {
      tree = await killEscapees(pgid, pollMs);
    } finally {
      // Stopped, the members take the SIGTERM once continued.
      signalGroup(pgid, 'SIGTERM');
      signalGroup(pgid, 'SIGCONT');
    }
  } else if (!signalGroup(pgid, 'SIGTERM')) return true;
  if (!(await waitGone(pgid, graceMs, pollMs))) {
    // What the group started during the grace period (a sandbox bwrap set up meanwhile) is swept
    // again before the SIGKILL, the group stopped so nothing new can start.
    if (hasProcfs() && signalGroup(pgid, 'SIGSTOP'))
      tree = [...tree, ...(await killEscapees(pgid, pollMs).catch(() => []))];
    signalGroup(pgid, 'SIGKILL');
    if (!(await waitGone(pgid, 2000, pollMs))) return false;
  }
  return tree.length === 0 ? true : endLeftovers(tree, pollMs);
}

/**
 * Ends what is left of a tree once its group is gone: a process that was a member when the group
 * was stopped may have left it after (bubblewrap's sandbox init calls `setsid` only once it runs,
 * and as a PID namespace's init it ignores the group's SIGTERM), taking its own children along,
 * out of the group's reach and, once its parent is gone, out of its ancestry too. Each such
 * process still running (same pid and start time) is killed with everything below it; resolves
 * once none of them runs (up to 2 s).
 */
async function endLeftovers(tree: readonly ProcStat[], pollMs: number): Promise<boolean> {
  const known = new Map(tree.map((p) => [p.pid, p.start]));
  const isLeft = (p: ProcStat) => known.get(p.pid) === p.start && isLiveState(p.state);
  let all = await listProcesses();
  const left = new Set(all.filter(isLeft).map((p) => p.pid));
  if (left.size === 0) return true;
  // Stopped first, and seen stopped, so none can start a child after the listing below.
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGSTOP');
    } catch {
      // Gone already.
    }
  }
  const stopBy = Date.now() + STOP_WAIT_MS;
  const running = (p: ProcStat) => left.has(p.pid) && isLeft(p) && p.state !== 'T' && p.state !== 't';
  for (all = await listProcesses(); all.some(running) && Date.now() < stopBy; all = await listProcesses())
    await delay(pollMs);
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const stack = [...left];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    for (const child of children.get(pid) ?? []) {
      if (left.has(child.pid)) continue;
      left.add(child.pid);
      stack.push(child.pid);
    }
  }
  const doomed = new Map(all.filter((p) => left.has(p.pid)).map((p) => [p.pid, p.start]));
  for (const pid of doomed.keys()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  const until = Date.now() + 2000;
  for (;;) {
    all = await listProcesses();
    if (!all.some((p) => doomed.get(p.pid) === p.start && isLiveState(p.state))) return true;
    if (Date.now() >= until) return false;
    await delay(pollMs);
  }
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
async function killEscapees(pgid: number, pollMs: number): Promise<ProcStat[]> {
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
  // The whole tree as it was: members (one may leave the group later) and the escapees killed.
  const inTree = new Set([...members, ...escapees]);
  return all.filter((p) => inTree.has(p.pid));
}
