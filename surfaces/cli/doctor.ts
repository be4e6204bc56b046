import { parseArgs } from 'node:util';
import { runDoctor } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra doctor [--config F] [--json]';

/** `snotra doctor`: what this machine and config have and lack, each with the fix. Exit 1 when a check fails. */
export async function doctorCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const checks = await runDoctor(values.config, cwd);
  for (const c of checks) {
    io.stdout(
      values.json
        ? `${JSON.stringify(c)}\n`
        : `${c.status.padEnd(4)}  ${c.name}: ${c.detail}${c.fix === undefined ? '' : `\n      fix: ${c.fix}`}\n`,
    );
  }
  return checks.some((c) => c.status === 'fail') ? ExitCode.failure : ExitCode.ok;
}
