import type { Command, CommanderError } from 'commander';
import { didYouMean } from '../../runtime/index.ts';
import { COMMAND_SPECS, GROUPS, flagNames, type CommandSpec } from './commands.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { packageVersion } from './package-root.ts';

const EXIT_CODES = `Exit codes (every command):
  0   success (policy check: allowed)
  1   failure: invalid config, unreadable state, a refused decision, a failed run, a broken audit chain,
      no running runtime (inspect)
  2   usage error: unknown command or flag, bad or missing arguments
  3   policy replay: the proposed config loosens a recorded call
  10  policy check: approval required
  11  policy check: denied
  20  run: parked on an approval`;

function optionsText(spec: CommandSpec): string {
  const rows = [...spec.options, ['-h, --help', 'show this help'] as const];
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`).join('\n');
}

function examplesText(examples: readonly string[]): string {
  return `Examples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`;
}

/** The outcome of parsing: a command to run with its own arguments, or an exit code (help, version, usage error). */
export type Parsed =
  | { readonly kind: 'run'; readonly spec: CommandSpec; readonly argv: string[] }
  | { readonly kind: 'exit'; readonly code: number };

/**
 * Parses `argv` with commander: the command tree, `--help` on every command, `--version`,
 * `help [command]` and did-you-mean for commands. A leaf's own flags are read by its
 * implementation (they pass through untouched, so `--` and values starting with `-` keep their
 * meaning); an unknown one gets a suggestion from the flags listed here (`withFlagSuggestion`).
 * Help goes to `io.stdout`; usage errors throw `UsageError`.
 */
export async function parseCommandLine(argv: string[], io: CliIo): Promise<Parsed> {
  return plainCommandLine(argv) ?? parseWithCommander(argv, io);
}

/**
 * The common case without commander (its import and the command tree cost ~10 ms of a
 * `snotra policy check`): the words name a leaf command exactly and every flag before `--` is
 * one of that command's own long flags (`--tool`, `--json=…`). Anything else — help, version,
 * `help …`, a short flag, an unknown or misspelt flag, a group without its command — returns
 * null and goes through commander, so help, did-you-mean and usage errors stay its own.
 */
export function plainCommandLine(argv: readonly string[]): Parsed | null {
  if (argv[0] === undefined || argv[0] === 'help') return null;
  const spec = COMMAND_SPECS.find((s) => s.path.every((word, i) => argv[i] === word));
  if (spec === undefined) return null;
  const own = new Set(
    spec.options.flatMap(([flags]) => flags.split(/[ ,]+/).filter((f) => f.startsWith('--'))),
  );
  own.delete('--help');
  const end = argv.indexOf('--');
  const before = (end === -1 ? argv : argv.slice(0, end)).slice(spec.path.length);
  for (const word of before) {
    if (!word.startsWith('-')) continue;
    const eq = word.indexOf('=');
    if (!own.has(eq === -1 ? word : word.slice(0, eq))) return null;
  }
  return { kind: 'run', spec, argv: argv.slice(spec.path.length) };
}

/** `parseCommandLine` through commander, always (the reference `plainCommandLine` must agree with). */
export async function parseWithCommander(argv: string[], io: CliIo): Promise<Parsed> {
  const { Command, CommanderError } = await import('commander');
  let errText = '';
  const program = new Command('snotra')
    .description('Snotra Runtime: local AI agents that are safe to leave running.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => void (errText += s),
      outputError: (s) => void (errText += s),
    })
    .addHelpText(
      'after',
      `\n${examplesText(['snotra start', 'snotra run "summarize README.md"', 'snotra inbox list', 'snotra help inbox approve'])}\n\n${EXIT_CODES}\n\nRun \`snotra COMMAND --help\` for a command's flags and examples.`,
    );
  let chosen: Parsed | null = null;
  const groups = new Map<string, Command>();
  for (const spec of COMMAND_SPECS) {
    const [first, second] = spec.path as [string, string | undefined];
    let parent = program;
    if (second !== undefined) {
      let group = groups.get(first);
      if (group === undefined) {
        group = program.command(first).description(GROUPS[first] ?? '');
        groups.set(first, group);
      }
      parent = group;
    }
    parent
      .command(second ?? first)
      .description(spec.summary)
      .usage(spec.usage)
      .allowUnknownOption()
      .allowExcessArguments()
      .configureHelp({ visibleOptions: () => [] })
      .addHelpText('after', `\nOptions:\n${optionsText(spec)}\n\n${examplesText(spec.examples)}\n`)
      .action(() => {
        // The leaf's own arguments exactly as given (commander's view drops a leading `--`).
        chosen = { kind: 'run', spec, argv: argv.slice(spec.path.length) };
      });
  }
  for (const [name, group] of groups) {
    const examples = COMMAND_SPECS.filter((s) => s.path[0] === name).map((s) => s.examples[0] as string);
    group.addHelpText('after', `\n${examplesText(examples)}\n`);
  }
  // `snotra help inbox approve` is `snotra inbox approve --help` (commander's help command takes one name).
  if (argv[0] === 'help' && argv[1] !== undefined && !topNames().includes(argv[1]))
    throw new UsageError(
      `unknown command ${JSON.stringify(argv[1])}${didYouMean(argv[1], topNames())}; commands: ${topNames().join(', ')}`,
    );
  // Commander sees only what precedes `--`: after it, `--help` is a command's argument, not a flag.
  const end = argv.indexOf('--');
  const before = end === -1 ? argv : argv.slice(0, end);
  const words = argv[0] === 'help' && argv.length > 1 ? [...argv.slice(1), '--help'] : before;
  try {
    await program.parseAsync(words, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return { kind: 'exit', code: ExitCode.ok };
    throw new UsageError(usageMessage(err, errText, argv, groups));
  }
  return chosen ?? { kind: 'exit', code: ExitCode.ok };
}

/** Commander's error in this CLI's words: `unknown command "strat"; did you mean "start"?`. */
function usageMessage(
  err: CommanderError,
  errText: string,
  argv: string[],
  groups: Map<string, Command>,
): string {
  if (err.code === 'commander.unknownCommand') {
    const group = groups.get(argv[0] as string);
    const name = group === undefined ? (argv[0] as string) : (argv[1] as string);
    const known = group === undefined ? [...topNames(), 'help'] : group.commands.map((c) => c.name());
    return `unknown command ${JSON.stringify(name)}${didYouMean(name, known)}; commands: ${known.join(', ')}`;
  }
  if (err.code === 'commander.help') {
    // A group without its subcommand: its help went to errText.
    const group = groups.get(argv[0] as string);
    const known = group?.commands.map((c) => c.name()) ?? topNames();
    return `${group === undefined ? 'no command given' : 'a subcommand is needed'}; commands: ${known.join(', ')}`;
  }
  const text = errText.replace(/^error: /, '').trim();
  return text.replace(
    /\s*\(Did you mean (\S+?)\?\)/,
    (_m, s: string) => `; did you mean ${JSON.stringify(s)}?`,
  );
}

function topNames(): string[] {
  return [...new Set(COMMAND_SPECS.map((s) => s.path[0] as string))];
}

const UNKNOWN_FLAG = /(Unknown option|unknown argument) (['"])(--?[^'"=]+)(=[^'"]*)?\2/;

/** The message of a leaf's unknown-flag error with `; did you mean "--json"?` after the flag, when one is close. */
export function withFlagSuggestion(message: string, spec: CommandSpec): string {
  const m = UNKNOWN_FLAG.exec(message);
  if (m === null) return message;
  const hint = didYouMean(m[3] as string, flagNames(spec));
  if (hint === '') return message;
  const at = m.index + m[0].length;
  // parseArgs goes on with ". To specify a positional…": the question mark ends the sentence instead.
  const rest = message.slice(at).replace(/^\./, '');
  return `${message.slice(0, at)}${hint}${rest}`;
}
