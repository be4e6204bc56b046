/**
 * The shapes of a supervised child: what to start, the handle the supervisor returns and how its
 * main program ended. Their own module so that `run.ts` (which drives a child to completion) and
 * `supervisor.ts` (which starts children and uses `run.ts`) share them without a cycle.
 */
import type { Readable, Writable } from 'node:stream';
import type { ChildEnvEntry } from '../../actors/tools/process-runner.ts';

/** What to start. */
export interface SpawnRequest {
  readonly command: string;
  readonly args: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  readonly env?: readonly ChildEnvEntry[];
  /** `pipe` for servers spoken to over stdin (MCP stdio); default `ignore` (/dev/null). */
  readonly stdin?: 'pipe' | 'ignore';
  /** A name for listings and logs (never secret). */
  readonly label?: string;
  /**
   * The command takes its stdin and stdout on fds 4 and 5 (set by the sandbox's wrapping of a
   * stdio server, not by callers): the child's pipes are put there, its fds 0 and 1 are /dev/null.
   */
  readonly handedStdio?: boolean;
}

/** How the main program of a child ended. */
export interface ChildExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** A tracked child. */
export interface SupervisedChild {
  readonly pid: number;
  /** Its process group id (equal to `pid` on POSIX). */
  readonly pgid: number;
  readonly label: string;
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves when the main program exits. */
  readonly exited: Promise<ChildExit>;
  /** Resolves when the main program exited and the rest of its tree was ended. */
  readonly finished: Promise<void>;
  /** Ends the whole tree (SIGTERM, then SIGKILL after the grace period). */
  terminate(): Promise<void>;
}

/** A listing entry of `ProcessSupervisor.children`. */
export interface ChildInfo {
  readonly pid: number;
  readonly pgid: number;
  readonly label: string;
}
