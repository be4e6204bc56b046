/**
 * A sandbox backend behind one interface: it turns a command and the run's confinement into the
 * command line that runs it confined. Bubblewrap on Linux; `sandbox-exec` on macOS is designed
 * behind the same interface (see `sandbox-exec.ts`) and not enabled yet.
 */
import { realpath, stat } from 'node:fs/promises';
import type { Confinement } from '../../actors/tools/process-runner.ts';
import { bwrapArgs, bwrapStdioArgs } from './bwrap.ts';
import { DEFAULT_WALK_LIMITS, findProtectedPaths, type HostRules, type WalkLimits } from './host.ts';
import { SandboxError, type SandboxPlan } from './plan.ts';

export { SandboxError };

/** Names of sandbox backends (the ready line and the README use them). */
export type SandboxName = 'bubblewrap' | 'sandbox-exec';

/** A command line that runs a command confined, and the plan it was made from. */
export interface WrappedCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly plan: SandboxPlan;
  /** The command takes its stdin and stdout on fds 4 and 5 (`HANDED_STDIN_FD`, `HANDED_STDOUT_FD`). */
  readonly handedStdio?: boolean;
}

/** Options of `Sandbox.wrap`. */
export interface WrapOptions {
  /**
   * The command is a server spoken to over its stdin and stdout: they are to reach it so that
   * it alone holds them (a server that closes either is seen at once). The result's
   * `handedStdio` says how.
   */
  readonly stdioServer?: boolean;
}

/** An OS sandbox. */
export interface Sandbox {
  readonly name: SandboxName;
  /**
   * The command line that runs `command args…` in `cwd` confined to `scope`. Rejects with a
   * `SandboxError` when the scope cannot be mounted (no root exists, `cwd` is outside the roots).
   */
  wrap(
    scope: Confinement,
    cwd: string,
    command: string,
    args: readonly string[],
    options?: WrapOptions,
  ): Promise<WrappedCommand>;
}

async function canonicalDir(path: string): Promise<string | null> {
  try {
    const real = await realpath(path);
    return (await stat(real)).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/**
 * The plan for `scope`: roots canonical and existing (a root that vanished is dropped), `cwd`
 * canonical and inside a root, and the protected paths the host holds now.
 */
export async function planFor(
  scope: Confinement,
  cwd: string,
  rules: HostRules,
  limits: WalkLimits = DEFAULT_WALK_LIMITS,
): Promise<SandboxPlan> {
  const roots: { path: string; access: 'read' | 'read-write' }[] = [];
  const walked: { path: string; writable: boolean; deny: readonly string[] }[] = [];
  for (const root of scope.roots) {
    const path = await canonicalDir(root.path);
    if (path === null) continue;
    roots.push({ path, access: root.access });
    walked.push({ path, writable: root.access === 'read-write', deny: root.deny ?? [] });
  }
  const dir = await canonicalDir(cwd);
  if (dir === null) throw new SandboxError(`the working directory ${JSON.stringify(cwd)} is not a directory`);
  const inside = roots.some((r) => dir === r.path || dir.startsWith(r.path === '/' ? '/' : `${r.path}/`));
  if (!inside) {
    throw new SandboxError(`the working directory ${JSON.stringify(dir)} is inside no root of the sandbox`);
  }
  const found = await findProtectedPaths(rules, walked, limits);
  const programs: string[] = [];
  for (const p of scope.programs ?? []) {
    if (!p.startsWith('/')) continue;
    const real = await realpath(p).catch(() => null);
    if (real !== null) programs.push(real);
  }
  return {
    roots,
    readOnly: found.neverWritable,
    hidden: found.sensitive,
    network: scope.network,
    cwd: dir,
    ...(programs.length > 0 ? { programs } : {}),
  };
}

/** Options of `createBubblewrapSandbox`. */
export interface BubblewrapOptions {
  /** The `bwrap` program (absolute). */
  readonly bwrap: string;
  /** The policy's sensitive and never-writable globs (from the path guard). */
  readonly rules: HostRules;
  readonly walkLimits?: WalkLimits;
}

/** The bubblewrap backend (Linux). */
export function createBubblewrapSandbox(options: BubblewrapOptions): Sandbox {
  return {
    name: 'bubblewrap',
    async wrap(scope, cwd, command, args, wrapOptions) {
      const plan = await planFor(scope, cwd, options.rules, options.walkLimits);
      if (wrapOptions?.stdioServer === true) {
        return {
          command: options.bwrap,
          args: bwrapStdioArgs(plan, [command, ...args]),
          plan,
          handedStdio: true,
        };
      }
      return { command: options.bwrap, args: bwrapArgs(plan, [command, ...args]), plan };
    },
  };
}
