/**
 * Reading process state from Linux `/proc`: which processes exist, in which process group, and
 * whether they are still running or only zombies waiting to be reaped.
 */
import { readdir, readFile } from 'node:fs/promises';

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcStat {
  readonly pid: number;
  /** Single-letter state: `R`, `S`, `D`, `T`, `Z` (zombie), `X` (dead)… */
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  /** When it started (clock ticks since boot): with the pid, names one process even after reuse. */
  readonly start: number;
}

/**
 * Parses the text of `/proc/<pid>/stat`. The command name is in parentheses and may itself
 * contain spaces and parentheses, so the fields are read after the last `)`.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number.parseInt(text.slice(0, open), 10);
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const [state, ppid, pgrp] = rest;
  if (state === undefined || ppid === undefined || pgrp === undefined || !Number.isInteger(pid)) return null;
  const start = Number.parseInt(rest[19] ?? '', 10);
  return {
    pid,
    state,
    ppid: Number.parseInt(ppid, 10),
    pgrp: Number.parseInt(pgrp, 10),
    start: Number.isInteger(start) ? start : -1,
  };
}

/** Whether `/proc` can be read on this host. */
export function hasProcfs(): boolean {
  return process.platform === 'linux';
}

/** Every process visible in `/proc` (processes that vanish while scanning are skipped). */
export async function listProcesses(): Promise<ProcStat[]> {
  const names = await readdir('/proc');
  const stats = await Promise.all(
    names
      .filter((n) => /^\d+$/.test(n))
      .map(async (n) => {
        try {
          return parseProcStat(await readFile(`/proc/${n}/stat`, 'utf8'));
        } catch {
          return null;
        }
      }),
  );
  return stats.filter((s): s is ProcStat => s !== null);
}

/** Whether a process state is a live one (not a zombie or dead entry). */
export function isLiveState(state: string): boolean {
  return state !== 'Z' && state !== 'X' && state !== 'x';
}

/** Live (non-zombie) members of process group `pgid`. */
export async function liveGroupMembers(pgid: number): Promise<ProcStat[]> {
  const all = await listProcesses();
  return all.filter((p) => p.pgrp === pgid && isLiveState(p.state));
}
