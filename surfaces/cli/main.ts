import { createInterface } from 'node:readline';
import { ConfigError } from '../../runtime/config/errors.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { auditCommand } from './audit.ts';
import { demoCommand } from './demo.ts';
import { inboxCommand } from './inbox.ts';
import { policyCheckCommand } from './policy-check.ts';
import { grantsCommand } from './grants.ts';
import { runCommand } from './run.ts';
import { processTerminal } from './run/prompt.ts';
import { runsCommand } from './runs.ts';
import { startCommand } from './start.ts';

type Command = (argv: string[], io: CliIo, cwd: string) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  policy: async (argv, io, cwd) => {
    if (argv[0] !== 'check') throw new UsageError('usage: snotra policy check ...');
    return policyCheckCommand(argv.slice(1), io, cwd);
  },
  start: startCommand,
  demo: (argv, io) => demoCommand(argv, io),
  inbox: inboxCommand,
  runs: runsCommand,
  run: runCommand,
  grants: grantsCommand,
  audit: (argv, io) => auditCommand(argv, io),
};

const processIo: CliIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
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
  try {
    return await command(rest, io, cwd);
  } catch (err) {
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
}
