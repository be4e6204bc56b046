import { createInterface } from 'node:readline';
import { ConfigError } from '../../runtime/config/errors.ts';
import { ExitCode, OutputClosedError, UsageError, type CliIo } from './io.ts';
import { auditCommand } from './audit.ts';
import { demoCommand } from './demo.ts';
import { inboxCommand } from './inbox.ts';
import { policyCheckCommand } from './policy-check.ts';
import { policyShowCommand } from './policy-show.ts';
import { grantsCommand } from './grants.ts';
import { runCommand } from './run.ts';
import { processTerminal } from './run/prompt.ts';
import { runsCommand } from './runs.ts';
import { startCommand } from './start.ts';
import { tasksCommand } from './tasks.ts';
import { doctorCommand } from './doctor.ts';
import { initCommand } from './init.ts';
import { vizCommand } from './viz.ts';

type Command = (argv: string[], io: CliIo, cwd: string) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  policy: async (argv, io, cwd) => {
    if (argv[0] === 'show') return policyShowCommand(argv.slice(1), io, cwd);
    if (argv[0] !== 'check') throw new UsageError('usage: snotra policy check ... | snotra policy show ...');
    return policyCheckCommand(argv.slice(1), io, cwd);
  },
  start: startCommand,
  demo: (argv, io) => demoCommand(argv, io),
  inbox: inboxCommand,
  runs: runsCommand,
  tasks: tasksCommand,
  doctor: doctorCommand,
  init: (argv, io, cwd) => initCommand(argv, io, cwd),
  viz: vizCommand,
  audit: (argv, io, cwd) => auditCommand(argv, io, cwd),
  run: runCommand,
  grants: grantsCommand,
};

/** Whether a stream error means the reader closed its end (a pipe to `head`, a closed terminal). */
function readerGone(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED' || err.code === 'ECONNRESET';
}

let stdoutClosed = false;
let listening = false;
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
  approvalTerminal: () => (process.stdin.isTTY && process.stderr.isTTY ? processTerminal() : null),
};

/** Runs one CLI invocation and returns its exit code. Errors are printed, never thrown. */
export async function runCli(argv: string[], io: CliIo = processIo, cwd = process.cwd()): Promise<number> {
  const [name, ...rest] = argv;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr(
      `${name === undefined ? 'no command given' : `unknown command ${JSON.stringify(name)}`}; commands: ${Object.keys(COMMANDS).join(', ')}\n`,
    );
    return ExitCode.usage;
  }
  if (io === processIo) watchOutput();
  try {
    return await command(rest, io, cwd);
  } catch (err) {
    if (err instanceof OutputClosedError) return ExitCode.ok;
    if (err instanceof UsageError) {
      io.stderr(`snotra ${name}: ${err.message}\n`);
      return ExitCode.usage;
    }
    if (err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return ExitCode.failure;
    }
    const e = err as { code?: unknown; message?: unknown };
    io.stderr(
      `snotra ${name}: ${typeof e.code === 'string' ? `${e.code}: ` : ''}${String(e.message ?? err)}\n`,
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
