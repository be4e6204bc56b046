import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLiveState, listProcesses, type ProcStat } from '../../runtime/processes/index.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Live processes whose ancestry leads to `root` (the runtime), found through /proc. */
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

function setup(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-tree-')));
  dirs.push(dir);
  mkdirSync(join(dir, 'project'));
  writeFileSync(
    join(dir, 'script.json'),
    JSON.stringify([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'shell', args: { command: "sh -c 'sleep 300 & sleep 300'" } }],
        },
      },
    ]),
  );
  writeFileSync(
    join(dir, 'snotra.config.json'),
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: { worker: { mode: 'allow', model: { provider: 'scripted', script: 'script.json' } } },
      surfaces: {
        scheduled: [
          {
            id: 'sleeper',
            agent: 'worker',
            cron: new Date(Date.now() + 2500).toISOString().replace(/\.\d+Z$/, ''),
            // A start slower than the margin under load still runs the task once.
            missed: 'run-once',
            message: 'sleep',
          },
        ],
      },
    }),
  );
  return dir;
}

describe('contract 12: closing the runtime terminates its managed process tree', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`after ${signal} to the runtime, no process of a shell call's tree is left within 5 s`, async () => {
      const dir = setup();
      const child = spawn(process.execPath, [BIN, 'start', '--config', join(dir, 'snotra.config.json')], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TZ: 'UTC' },
      });
      const exited = new Promise((r) => child.once('exit', r));
      try {
        const runtimePid = child.pid as number;
        let tree: ProcStat[] = [];
        const end = Date.now() + 20_000;
        while (Date.now() < end) {
          tree = await descendants(runtimePid);
          const cmdlines = tree.map((p) => safeCmdline(p.pid));
          if (cmdlines.filter((c) => c === 'sleep 300').length === 2) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const sleepPids = tree.filter((p) => safeCmdline(p.pid) === 'sleep 300').map((p) => p.pid);
        expect(sleepPids).toHaveLength(2);
        const treePids = tree.map((p) => p.pid);

        child.kill(signal);
        await exited;
        const gone = Date.now() + 5000;
        let left = await alive(treePids);
        while (left.length > 0 && Date.now() < gone) {
          await new Promise((r) => setTimeout(r, 50));
          left = await alive(treePids);
        }
        expect(left).toEqual([]);
      } finally {
        child.kill('SIGKILL');
      }
    }, 60_000);
  }
});

function safeCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}
