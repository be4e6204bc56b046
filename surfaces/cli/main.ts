import { createInterface } from 'node:readline';
import { ConfigError } from '../../runtime/index.ts';
import { CommandFailure, ExitCode, OutputClosedError, UsageError, type CliIo } from './io.ts';
import { parseCommandLine, withFlagSuggestion } from './program.ts';
import type { ApprovalTerminal } from './run/prompt.ts';

/** Whether a stream error means the reader closed its end (a pipe to `head`, a closed terminal). */
function readerGone(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED' || err.code === 'ECONNRESET';
}

let stdoutClosed = false;
let listening = false;
const closedListeners = new Set<() => void>();
/**
 * The one place that handles a closed output: an EPIPE on stdout stops the command quietly (the
 * next write throws `OutputClosedError`, which `runCli` turns into a silent exit); on stderr it is
 * ignored. Without these listeners Node prints an EPIPE stack trace and exits.
 */
function watchOutput(): void {
  if (listening) return;
  listening = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    stdoutClosed = true;
    if (!readerGone(err)) process.exitCode = ExitCode.failure;
    for (const l of [...closedListeners]) l();
    closedListeners.clear();
  });
  process.stderr.on('error', () => {});
}

const processIo: CliIo = {
  stdout: (t) => {
    // A failed synchronous write to a pipe destroys the stream at once; its 'error' event follows.
    if (stdoutClosed || process.stdout.destroyed) throw new OutputClosedError('standard output was closed');
    process.stdout.write(t);
  },
  stderr: (t) => {
    if (!process.stderr.destroyed) process.stderr.write(t);
  },
  stdinLines: () => createInterface({ input: process.stdin, crlfDelay: Infinity }),
  approvalTerminal: () => openTerminal?.() ?? null,
  onStdoutClosed: (listener) => {
    if (stdoutClosed) {
      queueMicrotask(listener);
      return () => {};
    }
    closedListeners.add(listener);
    return () => closedListeners.delete(listener);
  },
};

/**
 * The approval prompt on this process's terminal, loaded by `runCli` only when stdin and stderr
 * are TTYs (it pulls in the approval card's rendering and the Decision schema: start-up cost
 * every other invocation, `--version` and pipes included, does not pay).
 */
let openTerminal: (() => ApprovalTerminal) | null = null;

/** Whether the invocation asked for JSON output (`--json` before any `--`): then errors are JSON on stdout too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** An error as this CLI reports it: `{"error":{"code","message"}}` on stdout with `--json`, else a line on stderr. */
function report(io: CliIo, json: boolean, code: string, message: string, text: string): void {
  if (json) io.stdout(`${JSON.stringify({ error: { code, message } })}\n`);
  else io.stderr(text);
}

/** Runs one CLI invocation and returns its exit code. Errors are printed, never thrown. */
export async function runCli(argv: string[], io: CliIo = processIo, cwd = process.cwd()): Promise<number> {
  if (io === processIo) {
    watchOutput();
    if (openTerminal === null && process.stdin.isTTY && process.stderr.isTTY)
      openTerminal = (await import('./run/prompt.ts')).processTerminal;
  }
  // `snotra` alone on a terminal is the chat; without one it stays a usage error (scripts see exit 2).
  if (argv.length === 0 && io === processIo && process.stdin.isTTY && process.stdout.isTTY) argv = ['chat'];
  const json = wantsJson(argv);
  const name = argv[0] ?? '';
  try {
    const parsed = await parseCommandLine(argv, io);
    if (parsed.kind === 'exit') return parsed.code;
    try {
      return await parsed.spec.run(parsed.argv, io, cwd);
    } catch (err) {
      if (err instanceof UsageError) throw new UsageError(withFlagSuggestion(err.message, parsed.spec));
      throw err;
    }
  } catch (err) {
    if (err instanceof OutputClosedError) return ExitCode.ok;
    if (err instanceof UsageError) {
      report(
        io,
        json,
        err.code,
        err.message,
        `snotra${name.startsWith('-') || name === '' ? '' : ` ${name}`}: ${err.message}\n`,
      );
      return ExitCode.usage;
    }
    if (err instanceof CommandFailure) {
      report(io, json, err.code, err.message, `snotra ${name}: ${err.message}\n`);
      return ExitCode.failure;
    }
    if (err instanceof ConfigError) {
      report(io, json, err.code, err.message, `${err.message}\n`);
      return ExitCode.failure;
    }
    const e = err as { code?: unknown; message?: unknown };
    const code = typeof e.code === 'string' ? e.code : 'failure';
    const message = String(e.message ?? err);
    report(
      io,
      json,
      code,
      message,
      `snotra ${name}: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${message}\n`,
    );
    return ExitCode.failure;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  process.exitCode = await runCli(process.argv.slice(2));
  // Whatever a failed command left behind (a socket, a child's pipe) must not keep the process alive.
  setTimeout(() => process.exit(), 3000).unref();
}
