import { parseArgs } from 'node:util';
import { runDemo } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

/** `snotra demo [--keep]`: the self-contained walkthrough on a temp workspace (exit 0 when every step held). */
export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { keep: { type: 'boolean', default: false } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\nusage: snotra demo [--keep]`);
  }
  const ok = await runDemo((line) => io.stdout(`${line}\n`), values.keep);
  return ok ? ExitCode.ok : ExitCode.failure;
}
