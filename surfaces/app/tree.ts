/**
 * The process tree `snotra app` is responsible for: every live descendant of the runtime child
 * (found through /proc), and ending all of it, group by group, once the runtime has stopped.
 */
import { isLiveState, killGroup, listProcesses, type ProcStat } from '../../runtime/index.ts';

/** Live processes whose ancestry leads to `root` (not `root` itself). */
export async function descendantsOf(root: number): Promise<ProcStat[]> {
  const all = (await listProcesses()).filter((p) => isLiveState(p.state));
  const byPid = new Map(all.map((p) => [p.pid, p]));
  return all.filter((p) => {
    for (
      let cur: ProcStat | undefined = p, i = 0;
      cur !== undefined && i < 64;
      cur = byPid.get(cur.ppid), i++
    )
      if (cur.ppid === root) return true;
    return false;
  });
}

/**
 * Ends every process group of `members` that still runs (SIGTERM, then SIGKILL after
 * `graceMs`). The runtime normally stopped them already; this is what a crashed or hung runtime
 * leaves. Resolves with the groups that could not be ended (empty when the tree is gone).
 */
export async function endGroups(members: readonly ProcStat[], graceMs: number): Promise<number[]> {
  const groups = [...new Set(members.map((m) => m.pgrp))].filter((g) => g > 1 && g !== process.pid);
  const left = await Promise.all(groups.map(async (g) => ((await killGroup(g, graceMs)) ? null : g)));
  return left.filter((g): g is number => g !== null);
}
