/**
 * The seam through which tools start child processes. `actors/` never imports `runtime/`, so the
 * process supervisor (`runtime/processes`) is injected behind this interface.
 */

/** Where a configured variable's value came from: literal config, or a resolved secret. */
export const EnvSource = {
  config: 'config',
  secret: 'secret',
} as const;
export type EnvSource = (typeof EnvSource)[keyof typeof EnvSource];

/**
 * One configured variable for a child. Credential-like names (`*_TOKEN`, `*_KEY`, `*_SECRET`, …)
 * are accepted only with `source: 'secret'`; `NODE_OPTIONS`, `NODE_PATH` and loader-injection
 * variables are never accepted.
 */
export interface ChildEnvEntry {
  readonly name: string;
  readonly value: string;
  readonly source: EnvSource;
}

/** One root a confined child sees: its canonical path and what it may do there. */
export interface ConfinedRoot {
  readonly path: string;
  readonly access: 'read' | 'read-write';
  /** The root's `deny` globs (relative to it): what they match is hidden from the child. */
  readonly deny?: readonly string[];
}

/**
 * What a confined child may see and reach (the run's authority envelope, as the OS sandbox
 * mounts it): only `read-write` roots are writable; the network only when `network` is true.
 */
export interface Confinement {
  readonly roots: readonly ConfinedRoot[];
  readonly network: boolean;
  /**
   * Absolute host paths of the program's own files (an MCP server's script): readable even where
   * the sandbox puts a private file system (`/tmp`, `/run`), as the rest of the host is. They
   * grant no write and are no workspace root. Paths that do not exist are ignored.
   */
  readonly programs?: readonly string[];
}

/** A command to run to completion. */
export interface ProcessRunRequest {
  /** Program to execute (looked up on the child's allowlisted PATH when not absolute). */
  readonly command: string;
  readonly args: readonly string[];
  /** Absolute working directory, already checked by the caller. */
  readonly cwd: string;
  /** Configured variables added to the allowlisted environment. */
  readonly env?: readonly ChildEnvEntry[];
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  readonly timeoutMs: number;
  /** Bytes kept from stdout and from stderr each; the rest is counted and dropped. */
  readonly maxOutputBytes: number;
  /** Aborting kills the whole process tree. */
  readonly signal?: AbortSignal;
  /**
   * Run inside the runner's OS sandbox with this scope. Absent: not confined. When the runner has
   * no sandbox (`sandbox` is null) the command runs unconfined; callers that must not run
   * unconfined check `sandbox` first.
   */
  readonly confine?: Confinement;
}

/** How a run ended. Output is decoded as UTF-8 (invalid sequences replaced). */
export interface ProcessRunResult {
  /** Exit code, or null when the process was ended by a signal. */
  readonly exitCode: number | null;
  /** The signal that ended the process, or null. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Total bytes the child wrote to stdout and stderr (kept or not). */
  readonly outputBytes: number;
  /** Whether some output was dropped at `maxOutputBytes`. */
  readonly truncated: boolean;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly durationMs: number;
}

/** Runs child processes with a sanitized environment, in their own process group. */
export interface ProcessRunner {
  run(request: ProcessRunRequest): Promise<ProcessRunResult>;
  /** The OS sandbox confined requests run in (`bubblewrap`), or null/absent when there is none. */
  readonly sandbox?: string | null;
}

/** Stable codes of `ProcessRunError`. */
export const ProcessRunErrorCode = {
  envVariableRefused: 'env_variable_refused',
  spawnFailed: 'spawn_failed',
  supervisorClosed: 'supervisor_closed',
  sandboxFailed: 'sandbox_failed',
} as const;
export type ProcessRunErrorCode = (typeof ProcessRunErrorCode)[keyof typeof ProcessRunErrorCode];

/** A child could not be started. The message names what was wrong, never a variable's value. */
export class ProcessRunError extends Error {
  constructor(
    readonly code: ProcessRunErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ProcessRunError';
  }
}
