/** `shell {command, cwd?}`: run a command through the process supervisor. */
import { ToolErrorCode } from './codes.ts';
import { resolveConfiguredEnv, type ConfiguredEnvValue } from './env-config.ts';
import { throwIfCancelled } from './paths.ts';
import {
  ProcessRunError,
  type Confinement,
  type ProcessRunner,
  type ProcessRunRequest,
  type ProcessRunResult,
} from './process-runner.ts';
import { ToolError, type ToolExecutionContext, type ToolExecutor } from './types.ts';
import { workingDirectory } from './working-dir.ts';

/** Options of the `shell` executor. */
export interface ShellOptions {
  readonly runner: ProcessRunner;
  /** Wall-clock limit per command (default 120 s). */
  readonly timeoutMs?: number;
  /** Bytes kept of stdout and of stderr each (default 256 KiB). */
  readonly maxOutputBytes?: number;
  /** Configured variables for the command (secret references resolved per call). */
  readonly env?: Readonly<Record<string, ConfiguredEnvValue>>;
  /** The shell program and its arguments before the command (default `/bin/sh -c`; `cmd.exe /d /s /c` on Windows). */
  readonly shell?: { readonly command: string; readonly args: readonly string[] };
}

/** What a finished command reports. */
export interface ShellResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  readonly durationMs: number;
}

function defaultShell(): { command: string; args: readonly string[] } {
  return process.platform === 'win32'
    ? { command: process.env.COMSPEC ?? 'cmd.exe', args: ['/d', '/s', '/c'] }
    : { command: '/bin/sh', args: ['-c'] };
}

/** Runs a request, turning start-up failures into `ToolError`s with the runner's code. */
export async function runChecked(
  runner: ProcessRunner,
  request: ProcessRunRequest,
): Promise<ProcessRunResult> {
  try {
    return await runner.run(request);
  } catch (error) {
    if (error instanceof ProcessRunError) throw new ToolError(error.code, error.message);
    throw error;
  }
}

/** The confinement of a call: the run's envelope, or its roots with their access and no network. */
export function confinementFor(ctx: ToolExecutionContext): Confinement {
  return (
    ctx.confinement ?? {
      roots: ctx.roots.map((r) => ({ path: r.path, access: r.access, ...(r.deny ? { deny: r.deny } : {}) })),
      network: false,
    }
  );
}

/**
 * Refuses to run a command unconfined when no human approved it: a call the policy allowed on
 * its own (`mode_allow`) was decided on the promise of a sandbox, and there is none.
 */
function requireSandboxOrHuman(runner: ProcessRunner, ctx: ToolExecutionContext): void {
  const sandboxed = runner.sandbox !== undefined && runner.sandbox !== null;
  if (sandboxed || ctx.decision.reason !== 'mode_allow') return;
  throw new ToolError(
    ToolErrorCode.sandboxUnavailable,
    'no OS sandbox is available, so a shell command needs a human approval before it runs',
  );
}

/**
 * Creates the `shell` executor. Guarantees: the working directory is the re-checked decided
 * `cwd` or the current primary root; the command runs through the injected `ProcessRunner`
 * (allowlisted environment plus configured variables, own process group, whole tree ended on
 * timeout and on `ctx.signal`) inside the runner's OS sandbox, confined to the run's envelope
 * (`confinementFor`); without a sandbox it runs only when a human approved the call
 * (`sandbox_unavailable` otherwise); a non-zero exit is `command_failed` and a timeout
 * `command_timeout`, both with the (capped) output as details; a cancel is `cancelled`.
 */
export function createShellExecutor(options: ShellOptions): ToolExecutor {
  const shell = options.shell ?? defaultShell();
  return {
    async execute(args, ctx: ToolExecutionContext): Promise<ShellResult> {
      throwIfCancelled(ctx.signal);
      requireSandboxOrHuman(options.runner, ctx);
      const cwd = workingDirectory(ctx, 'cwd', typeof args.cwd === 'string');
      const env = await resolveConfiguredEnv(options.env, ctx.secrets);
      const run = await runChecked(options.runner, {
        command: shell.command,
        args: [...shell.args, String(args.command)],
        cwd,
        env,
        timeoutMs: options.timeoutMs ?? 120_000,
        maxOutputBytes: options.maxOutputBytes ?? 256 * 1024,
        signal: ctx.signal,
        confine: confinementFor(ctx),
      });
      const result: ShellResult = {
        exitCode: run.exitCode,
        signal: run.signal,
        stdout: run.stdout,
        stderr: run.stderr,
        truncated: run.truncated,
        durationMs: run.durationMs,
      };
      if (run.cancelled) throw new ToolError(ToolErrorCode.cancelled, 'the command was cancelled');
      if (run.timedOut) {
        throw new ToolError(
          ToolErrorCode.commandTimeout,
          'the command ran past its time limit and was ended',
          {
            details: result,
          },
        );
      }
      if (run.exitCode !== 0) {
        const how =
          run.exitCode === null
            ? `was ended by ${run.signal ?? 'a signal'}`
            : `exited with code ${run.exitCode}`;
        throw new ToolError(ToolErrorCode.commandFailed, `the command ${how}`, { details: result });
      }
      return result;
    },
  };
}
