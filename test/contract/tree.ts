import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { isLiveState, listProcesses, type ProcStat } from '../../runtime/processes/index.ts';
import type { SurfaceRuntime } from './drivers/types.ts';

/** Live processes whose ancestry leads to `root`, found through /proc. */
async function descendants(root: number): Promise<ProcStat[]> {
  const all = (await listProcesses()).filter((p) => isLiveState(p.state));
  const byPid = new Map(all.map((p) => [p.pid, p]));
  return all.filter((p) => {
    for (
      let cur: ProcStat | undefined = p, i = 0;
      cur !== undefined && i < 64;
      cur = byPid.get(cur.ppid), i++
    ) {
      if (cur.ppid === root) return true;
    }
    return false;
  });
}

async function alive(pids: readonly number[]): Promise<number[]> {
  const live = new Set((await listProcesses()).filter((p) => isLiveState(p.state)).map((p) => p.pid));
  return pids.filter((p) => live.has(p));
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/**
 * Waits until the runtime's tree holds the two `sleep 300` of the case's shell call (besides
 * its nats-server and whatever else it manages), closes the runtime the way its launcher does,
 * and asserts that no process of that tree is left within 5 s.
 */
export async function closesItsTree(rt: SurfaceRuntime): Promise<void> {
  const root = rt.pid();
  let tree: ProcStat[] = [];
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    tree = await descendants(root);
    if (tree.filter((p) => cmdline(p.pid) === 'sleep 300').length === 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const sleeps = tree.filter((p) => cmdline(p.pid) === 'sleep 300');
  expect(sleeps, 'the two sleeps of the shell call under the runtime').toHaveLength(2);
  expect(
    tree.some((p) => cmdline(p.pid).includes('nats-server')),
    'its nats-server',
  ).toBe(true);
  const pids = [root, ...tree.map((p) => p.pid)];
  await rt.close();
  const gone = Date.now() + 5000;
  let left = await alive(pids);
  while (left.length > 0 && Date.now() < gone) {
    await new Promise((r) => setTimeout(r, 50));
    left = await alive(pids);
  }
  expect(left.map((p) => `${p} ${cmdline(p)}`)).toEqual([]);
}
