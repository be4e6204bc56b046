import type { ApprovalTerminal } from './run/prompt.ts';

/** Where a CLI command writes; injected so commands are testable in process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard input as a stream of lines (for `--stdin`). */
  stdinLines(): AsyncIterable<string>;
  /**
   * The terminal to ask approvals on, opened on first use; absent or null when stdin or stderr
   * is not a TTY (then nothing is ever approved inline).
   */
  readonly approvalTerminal?: () => ApprovalTerminal | null;
  /**
   * Calls `listener` once when the reader of standard output goes away (EPIPE), so a command
   * that writes only when something happens (`inspect`) ends then instead of at its next write.
   * Returns the removal.
   */
  readonly onStdoutClosed?: (listener: () => void) => () => void;
}

/** Exit codes shared by every command (documented in README.md). */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  /** `policy check`: the decision is approval-required. */
  approvalRequired: 10,
  /** `policy check`: the decision is deny. */
  denied: 11,
  /** `run --unattended`: the run parked on an approval (its Inbox id is printed). */
  parked: 20,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The reader of our output went away (`snotra audit | head -1`): there is nobody left to tell,
 * so the command stops and exits quietly.
 */
export class OutputClosedError extends Error {
  readonly code = 'output_closed';
}

/**
 * A command that could not do what was asked (an unknown id, a refused decision): exit 1 with
 * `snotra CMD: MESSAGE` on stderr, or `{"error":{"code","message"}}` on stdout under `--json`.
 */
export class CommandFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A usage error: bad flags or arguments. The message says what was wrong. */
export class UsageError extends Error {
  readonly code = 'usage';
}
