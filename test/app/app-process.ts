// Helpers for driving the real `snotra app --headless`: the process, its ready line, the page
// through the DevTools endpoint the app opens only for tests (SNOTRA_APP_DEVTOOLS=1), /proc.
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { isLiveState, listProcesses, type ProcStat } from '../../runtime/processes/index.ts';
import { startSnotra, type StartedProcess } from '../support/snotra-process.ts';

export interface RunningApp {
  readonly process: StartedProcess;
  readonly ready: { pid: number; runtimePid: number; sidecar: string; devtools: string };
  readonly browser: Browser;
  readonly page: Page;
  /** Every process ever seen below the app (pid and start time), for the no-process-left check. */
  readonly seen: Map<number, string>;
  /** Records the app's current descendants into `seen`; returns them. */
  snapshot(): Promise<ProcStat[]>;
}

function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

export async function descendants(root: number): Promise<ProcStat[]> {
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

/** Which of the seen processes still run (same pid and the same start time: not a reused pid). */
export async function stillRunning(seen: Map<number, string>): Promise<number[]> {
  const live = new Set((await listProcesses()).filter((p) => isLiveState(p.state)).map((p) => p.pid));
  return [...seen].filter(([pid, start]) => live.has(pid) && startTime(pid) === start).map(([pid]) => pid);
}

export async function startApp(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningApp> {
  const p = startSnotra(['app', '--headless', ...args], { SNOTRA_APP_DEVTOOLS: '1', ...env });
  const deadline = Date.now() + 90_000;
  let line: string | undefined;
  while (line === undefined) {
    line = p
      .stdout()
      .split('\n')
      .find((l) => l.includes('"event":"app.ready"'));
    if (line !== undefined) break;
    const ended = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r(null), 100))]);
    if (ended !== null) throw new Error(`snotra app ended (${String(ended)}) before ready:\n${p.stderr()}`);
    if (Date.now() > deadline) throw new Error(`snotra app printed no ready line:\n${p.stderr()}`);
  }
  const ready = JSON.parse(line) as RunningApp['ready'];
  const browser = await chromium.connectOverCDP(ready.devtools);
  const page = browser.contexts()[0]?.pages()[0];
  if (page === undefined) throw new Error('the app window has no page');
  const seen = new Map<number, string>();
  const snapshot = async () => {
    const now = [{ pid: p.pid } as ProcStat, ...(await descendants(p.pid))];
    for (const d of now) {
      const s = startTime(d.pid);
      if (s !== null) seen.set(d.pid, s);
    }
    return now;
  };
  await snapshot();
  return { process: p, ready, browser, page, seen, snapshot };
}

/** The full command line and environment of a process, as /proc shows them ('' once it is gone). */
export function procText(pid: number): { cmdline: string; environ: string } {
  const read = (f: string) => {
    try {
      return readFileSync(`/proc/${pid}/${f}`, 'utf8');
    } catch {
      return '';
    }
  };
  return { cmdline: read('cmdline'), environ: read('environ') };
}
