/**
 * The macOS backend, designed behind the same interface as bubblewrap: a Seatbelt (SBPL) profile
 * generated from the same plan, run as `sandbox-exec -p PROFILE command args…`. Pure functions;
 * not enabled by `detectSandbox` until it is verified on macOS (it cannot run on Linux CI).
 *
 * What it maps and what it cannot: reads are allowed except the hidden paths; writes only inside
 * `read-write` roots (minus never-writable paths), the per-user temp folder and `/dev/null`-like
 * devices; the network only when the plan grants it. Seatbelt has no PID namespace, so a
 * `setsid` daemon is not ended by the sandbox (the lifeline and process groups still apply).
 */
import type { SandboxPlan } from './plan.ts';

/** The program that applies a profile. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** An SBPL string literal. */
function quote(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The profile for `plan`. Later rules take precedence in SBPL, so the order is: deny by default;
 * allow process, signal (inside the sandbox), sysctl and Mach lookups; allow every read; deny
 * reads of hidden paths; allow writes to writable roots and devices; deny writes to never-writable
 * paths and hidden paths again; the network last.
 */
export function sandboxExecProfile(plan: SandboxPlan): string {
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow file-read*)',
  ];
  const hiddenFilters = plan.hidden.map((h) =>
    h.kind === 'dir' ? `(subpath ${quote(h.path)})` : `(literal ${quote(h.path)})`,
  );
  if (hiddenFilters.length > 0) lines.push(`(deny file-read* ${hiddenFilters.join(' ')})`);
  const writable = plan.roots
    .filter((r) => r.access === 'read-write')
    .map((r) => `(subpath ${quote(r.path)})`);
  lines.push(
    `(allow file-write* ${[...writable, '(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")', '(subpath (param "TMPDIR"))'].join(' ')})`,
  );
  const readOnly = plan.roots.filter((r) => r.access === 'read').map((r) => `(subpath ${quote(r.path)})`);
  const never = plan.readOnly.map((p) => `(subpath ${quote(p)})`);
  const noWrite = [...readOnly, ...never, ...hiddenFilters];
  if (noWrite.length > 0) lines.push(`(deny file-write* ${noWrite.join(' ')})`);
  if (plan.network) lines.push('(allow network*)', '(allow system-socket)');
  else lines.push('(allow network* (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))');
  return `${lines.join('\n')}\n`;
}

/** The `sandbox-exec` command line for `plan` (the per-user temp folder passed as `TMPDIR`). */
export function sandboxExecArgs(plan: SandboxPlan, tmpdir: string, argv: readonly string[]): string[] {
  return ['-D', `TMPDIR=${tmpdir}`, '-p', sandboxExecProfile(plan), ...argv];
}
