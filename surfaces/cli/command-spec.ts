/** The shape of one `snotra` command (commands.ts lists them) and the option lines several share. */
import type { CliIo } from './io.ts';

/** A command's implementation: the arguments after its name, the output, the folder it runs in. */
export type CommandRun = (argv: string[], io: CliIo, cwd: string) => Promise<number>;

/** One command or subcommand of `snotra`: what `--help` shows, and how to load and run it. */
export interface CommandSpec {
  /** `['inbox', 'list']`. */
  readonly path: readonly string[];
  readonly summary: string;
  /** What follows the command's name on the usage line. */
  readonly usage: string;
  /** `[flags, description]`; the flags' first word is the name suggestions are made from. */
  readonly options: readonly (readonly [string, string])[];
  readonly examples: readonly string[];
  /** Loaded on first use only (CLI start-up imports no command it does not run). */
  readonly run: CommandRun;
}

/** `--state-dir` and `--config`, as every command that reads a state dir takes them. */
export const STATE: readonly (readonly [string, string])[] = [
  ['--state-dir D', 'the state dir to read (else the config’s)'],
  ['--config F', 'the config file (else ./snotra.config.json, else the embedded defaults)'],
];
/** `--json`, as every command whose output is data takes it. */
export const JSON_OUT: readonly [string, string] = [
  '--json',
  'one JSON object per line; errors as {"error":{"code","message"}}',
];
