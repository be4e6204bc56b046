import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { eventually } from '../support/runtime.ts';

// Durations no other test uses: the processes are found by their command lines. A pid-derived
// fraction makes them this run's own: a second run of this file on the machine (two fresh clones
// tested at once) must not be seen as this run's tree.
const tag = String(process.pid).padStart(7, '0');
const ESCAPED = `sleep 291.${tag}`;
const NESTED = `sleep 292.${tag}`;
const IN_GROUP = `sleep 293.${tag}`;
const OUTSIDER = `sleep 294.${tag}`;
const LATE = `sleep 295.${tag}`;

const supervisor = new ProcessSupervisor({ killGraceMs: 500 });
const outsiders: ChildProcess[] = [];
afterAll(async () => {
  await supervisor.shutdown();
  for (const o of outsiders) o.kill('SIGKILL');
});

/** Live processes whose command line contains `marker`, with their process groups. */
async function live(marker: string): Promise<Array<{ pid: number; pgrp: number }>> {
  const found: Array<{ pid: number; pgrp: number }> = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').join(' ').trim();
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (cmdline === marker && fields[0] !== 'Z') found.push({ pid: Number(name), pgrp: Number(fields[2]) });
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

describe.runIf(process.platform === 'linux')('ending a tree reaches what left its process group', () => {
  it('a cancel ends a child that called setsid and what it started, not a look-alike outside the tree', async () => {
    // The benign look-alike: the same kind of process, in a session of its own, not started by
    // the tree (the sweep follows parent links from the group, never command lines).
    const outsider = spawn('setsid', OUTSIDER.split(' '), { stdio: 'ignore' });
    outsiders.push(outsider);
    const child = supervisor.spawn({
      command: '/bin/sh',
      args: [
        '-c',
        // A child that left the group (setsid, as a sandbox's namespace init does), one that left
        // it and started another, and one that stayed; the program waits for them all.
        `setsid ${ESCAPED} & setsid sh -c '${NESTED} & wait' & ${IN_GROUP} & wait`,
      ],
      cwd: tmpdir(),
    });
    await eventually(
      async () =>
        (await live(ESCAPED)).length === 1 &&
        (await live(NESTED)).length === 1 &&
        (await live(IN_GROUP)).length === 1 &&
        (await live(OUTSIDER)).length === 1,
      30_000,
      'every process of the tree and the outsider running',
    );
    // The evasion: out of the group, a group signal does not reach them.
    for (const m of [ESCAPED, NESTED]) expect((await live(m))[0]?.pgrp).not.toBe(child.pgid);
    expect((await live(IN_GROUP))[0]?.pgrp).toBe(child.pgid);
    await child.terminate();
    await eventually(
      async () =>
        (await live(ESCAPED)).length + (await live(NESTED)).length + (await live(IN_GROUP)).length === 0,
      10_000,
      'the tree gone, the escaped processes included',
    );
    expect(await live(OUTSIDER)).toHaveLength(1);
  });

  it('a member that leaves the group only after the stop (ignoring SIGTERM, as a sandbox init does) is ended too, before terminate resolves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'snotra-late-'));
    try {
      const go = join(dir, 'go');
      const script = join(dir, 'late.sh');
      // In the group when the tree is stopped; once continued, it ignores the SIGTERM, waits for
      // `go`, leaves the group (setsid keeps its pid) and starts a child of its own.
      writeFileSync(
        script,
        `trap '' TERM\nwhile [ ! -e "$1" ]; do sleep 0.05; done\nexec setsid sh -c '${LATE} & wait'\n`,
      );
      const child = supervisor.spawn({
        command: '/bin/sh',
        args: ['-c', `sh ${script} ${go} & wait`],
        cwd: dir,
      });
      const marker = `sh ${script} ${go}`;
      const member = await eventually(async () => (await live(marker))[0], 30_000, 'the member running');
      expect(member.pgrp).toBe(child.pgid);
      const ending = child.terminate();
      writeFileSync(go, ''); // seen only once the group is continued, after the sweep
      await ending;
      // Not eventually: terminate resolves once the whole tree has ended.
      const stat = await readFile(`/proc/${member.pid}/stat`, 'utf8').catch(() => null);
      const state = stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      expect(state === null || state === 'Z', `the member (pid ${member.pid}) ended`).toBe(true);
      expect(await live(LATE)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
