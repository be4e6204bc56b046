import type { CliIo } from '../../surfaces/cli/io.ts';
import { runCli } from '../../surfaces/cli/main.ts';

/** What one in-process CLI invocation printed and its exit code. */
export interface CliResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `snotra <argv>` in this process from `cwd`, with empty stdin, capturing stdout and stderr. */
export async function runCliInProcess(argv: string[], cwd: string): Promise<CliResult> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    stdinLines: async function* () {},
  };
  const code = await runCli(argv, io, cwd);
  return { code, out, err };
}
