import { parseArgs } from 'node:util';
import { ExitCode, UsageError, type CliIo } from '../io.ts';
import { bashScript, fishScript, zshScript } from './scripts.ts';
import { completionTree, type SpecWords } from './tree.ts';

const USAGE = 'usage: snotra completion bash|zsh|fish';
const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/**
 * `snotra completion SHELL`: prints the completion script of that shell, made from the command
 * specs and groups the commander program is built from (passed in: this module imports no spec).
 */
export async function completionCommand(
  argv: string[],
  io: CliIo,
  specs: readonly SpecWords[],
  groups: Readonly<Record<string, string>>,
): Promise<number> {
  let positionals;
  try {
    ({ positionals } = parseArgs({ args: argv, options: {}, strict: true, allowPositionals: true }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const [shell, ...rest] = positionals;
  if (shell === undefined || rest.length > 0 || !Object.hasOwn(SHELLS, shell))
    throw new UsageError(
      `${shell === undefined ? 'a shell is needed' : `unknown shell ${JSON.stringify(shell)}`}; shells: bash, zsh, fish\n${USAGE}`,
    );
  io.stdout(SHELLS[shell as keyof typeof SHELLS](completionTree(specs, groups)));
  return ExitCode.ok;
}
