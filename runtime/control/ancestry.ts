import { readFileSync } from 'node:fs';

/** The parent pid of `pid` from /proc, or null when it cannot be read (not Linux, gone). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields resume after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Whether `ancestor` is this process or one of its ancestors. Used so a process started by the
 * runtime (an agent's shell command and its children) cannot decide approvals through the CLI.
 * A process that double-forks away from the runtime escapes this check; the policy refuses the
 * literal forms, and the README says plainly that approved shell commands are not sandboxed.
 */
export function descendsFrom(ancestor: number, start: number = process.pid): boolean {
  let pid: number | null = start;
  for (let i = 0; i < 256 && pid !== null && pid > 1; i++) {
    if (pid === ancestor) return true;
    pid = parentOf(pid);
  }
  return false;
}
