/**
 * The process supervisor: the one place that starts child processes (shell commands, git, MCP
 * stdio servers). Each child runs in its own process group behind the lifeline wrapper, with
 * only the allowlisted environment, and confined children inside the OS sandbox; the supervisor tracks every child and ends whole trees on
 * exit of the main program, timeout, cancel and `shutdown()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import {
  ProcessRunError,
  ProcessRunErrorCode,
  type Confinement,
  type ProcessRunner,
  type ProcessRunRequest,
  type ProcessRunResult,
} from '../../actors/tools/process-runner.ts';
import type { ChildExit, ChildInfo, SpawnRequest, SupervisedChild } from './child.ts';
import { buildChildEnv } from './env.ts';
import { killGroup, signalGroup } from './group.ts';
import { lifelineArgs } from './lifeline.ts';
import { runToCompletion } from './run.ts';
import { SandboxError, type Sandbox, type WrapOptions } from '../sandbox/index.ts';

/** Construction options of `ProcessSupervisor`. */
export interface ProcessSupervisorOptions {
  /** The environment the allowlist is taken from; defaults to `process.env`. */
  readonly parentEnv?: Readonly<Record<string, string | undefined>>;
  /** Time between SIGTERM and SIGKILL when a tree is ended; default 2000 ms. */
  readonly killGraceMs?: number;
  /** Platform to behave as; defaults to `process.platform`. */
  readonly platform?: NodeJS.Platform;
  /** The OS sandbox confined requests run in; none when absent or null. */
  readonly sandbox?: Sandbox | null;
}

/**
 * Starts and tracks child processes. Guarantees: a child's environment is exactly
 * `buildChildEnv(parentEnv, request.env)`; a request with a confinement (`run` with `confine`,
 * `spawnConfined`) runs inside the OS sandbox when there is one (`sandbox` names it), in its own
 * PID namespace that ends with its main program and with this process; on POSIX every child leads its own process group and
 * is tied to this process by the lifeline (it and its group die within the grace period of this
 * process dying, SIGKILL included); when a child's main program exits, what is left of its group
 * is ended; `shutdown()` ends every tracked tree and refuses new children; a synchronous SIGKILL
 * to every tracked group is sent on `process.exit` as a last resort.
 */
export class ProcessSupervisor implements ProcessRunner {
  private readonly parentEnv: Readonly<Record<string, string | undefined>>;
  private readonly graceMs: number;
  private readonly platform: NodeJS.Platform;
  private readonly backend: Sandbox | null;
  /** The name of the sandbox confined requests run in, or null when there is none. */
  readonly sandbox: string | null;
  private readonly tracked = new Map<number, { info: ChildInfo; terminate: () => Promise<void> }>();
  private closed = false;
  private readonly onExit = (): void => {
    for (const { info } of this.tracked.values()) signalGroup(info.pgid, 'SIGKILL');
  };

  constructor(options: ProcessSupervisorOptions = {}) {
    this.parentEnv = options.parentEnv ?? process.env;
    this.graceMs = options.killGraceMs ?? 2000;
    this.platform = options.platform ?? process.platform;
    this.backend = options.sandbox ?? null;
    this.sandbox = this.backend?.name ?? null;
    process.on('exit', this.onExit);
  }

  /** The children being tracked now. */
  get children(): readonly ChildInfo[] {
    return [...this.tracked.values()].map((t) => t.info);
  }

  /**
   * Starts `request.command` as a tracked child. Throws `ProcessRunError`
   * (`env_variable_refused`, `spawn_failed`, `supervisor_closed`) before anything runs.
   */
  spawn(request: SpawnRequest): SupervisedChild {
    if (this.closed) {
      throw new ProcessRunError(ProcessRunErrorCode.supervisorClosed, 'the process supervisor is shut down');
    }
    const env = buildChildEnv(this.parentEnv, request.env, this.platform);
    const posix = this.platform !== 'win32';
    let child: ChildProcess;
    try {
      child = posix
        ? spawn('/bin/sh', lifelineArgs(request.command, request.args, this.graceMs, request), {
            cwd: request.cwd,
            env,
            detached: true,
            stdio: [request.stdin ?? 'ignore', 'pipe', 'pipe', 'pipe'],
          })
        : spawn(request.command, [...request.args], {
            cwd: request.cwd,
            env,
            windowsHide: true,
            stdio: [request.stdin ?? 'ignore', 'pipe', 'pipe'],
          });
    } catch (error) {
      throw new ProcessRunError(ProcessRunErrorCode.spawnFailed, `cannot start "${request.command}"`, {
        cause: error,
      });
    }
    const pid = child.pid;
    if (pid === undefined) {
      child.on('error', () => {});
      throw new ProcessRunError(
        ProcessRunErrorCode.spawnFailed,
        `cannot start "${request.command}" (working directory or shell missing)`,
      );
    }
    const lifeline = posix ? (child.stdio[3] as (Readable & Writable) | null | undefined) : undefined;
    lifeline?.on('error', () => {});
    child.on('error', () => {});
    const label = request.label ?? request.command;
    const info: ChildInfo = { pid, pgid: pid, label };

    const exited = new Promise<ChildExit>((resolve) => {
      child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    let ending: Promise<void> | null = null;
    const endTree = (): Promise<void> => {
      ending ??= (async () => {
        if (posix) {
          await killGroup(pid, this.graceMs);
          lifeline?.destroy();
        } else {
          await killWindowsTree(pid);
        }
        this.tracked.delete(pid);
      })();
      return ending;
    };
    const finished = exited.then(endTree);
    this.tracked.set(pid, { info, terminate: endTree });

    const stdout = child.stdout;
    const stderr = child.stderr;
    if (stdout === null || stderr === null) throw new Error('child stdio pipes missing');
    return {
      pid,
      pgid: pid,
      label,
      stdin: child.stdin,
      stdout,
      stderr,
      exited,
      finished,
      terminate: async () => {
        await endTree();
        await exited;
      },
    };
  }

  /**
   * Starts a long-lived child (an MCP stdio server) confined to `confine` when this supervisor
   * has a sandbox (unconfined otherwise: check `sandbox` first where that matters). Rejects with
   * `ProcessRunError` (`sandbox_failed` and the codes of `spawn`) before anything runs.
   */
  async spawnConfined(request: SpawnRequest & { readonly confine: Confinement }): Promise<SupervisedChild> {
    const launch = await this.confined(request.confine, request.cwd, request.command, request.args, {
      stdioServer: request.stdin === 'pipe',
    });
    return this.spawn({ ...request, label: request.label ?? request.command, ...launch });
  }

  /**
   * Runs a command to completion with timeout, output cap and cancel (see `ProcessRunner`);
   * inside the sandbox when the request has a confinement and this supervisor has a sandbox.
   */
  async run(request: ProcessRunRequest): Promise<ProcessRunResult> {
    if (request.confine === undefined) return runToCompletion(this, request);
    const launch = await this.confined(request.confine, request.cwd, request.command, request.args);
    return runToCompletion(this, { ...request, ...launch });
  }

  /** The command line of a confined child (the command itself when there is no sandbox). */
  private async confined(
    confine: Confinement,
    cwd: string,
    command: string,
    args: readonly string[],
    options: WrapOptions = {},
  ): Promise<{ command: string; args: readonly string[]; handedStdio: boolean }> {
    if (this.backend === null) return { command, args, handedStdio: false };
    if (this.closed) {
      throw new ProcessRunError(ProcessRunErrorCode.supervisorClosed, 'the process supervisor is shut down');
    }
    try {
      const wrapped = await this.backend.wrap(confine, cwd, command, args, options);
      return { command: wrapped.command, args: wrapped.args, handedStdio: wrapped.handedStdio === true };
    } catch (error) {
      if (error instanceof SandboxError) {
        throw new ProcessRunError(ProcessRunErrorCode.sandboxFailed, error.message, { cause: error });
      }
      throw error;
    }
  }

  /** Ends every tracked tree and refuses new children. Safe to call more than once. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.tracked.values()].map((t) => t.terminate()));
    process.off('exit', this.onExit);
  }
}

/** Windows: end the tree with `taskkill /T /F` (no process groups, no lifeline there). */
function killWindowsTree(pid: number): Promise<void> {
  return new Promise((resolve) => {
    const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], {
      windowsHide: true,
      stdio: 'ignore',
    });
    killer.on('error', () => resolve());
    killer.on('exit', () => resolve());
  });
}
