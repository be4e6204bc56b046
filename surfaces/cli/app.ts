import { parseArgs } from 'node:util';
import { AppError, runApp } from '../app/app.ts';
import { ChromiumMissingError } from '../app/window.ts';
import { RuntimeStartError } from '../app/runtime-child.ts';
import { CommandFailure, UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra app [--config F] [--headless]';

/** `snotra app`: the desktop shell (surfaces/app/app.ts). */
export async function appCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { config: { type: 'string' }, headless: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  try {
    return await runApp({
      config: values.config,
      headless: values.headless === true,
      cwd,
      stdout: (t) => io.stdout(t),
      stderr: (t) => io.stderr(t),
    });
  } catch (err) {
    if (err instanceof ChromiumMissingError || err instanceof AppError || err instanceof RuntimeStartError)
      throw new CommandFailure(err.code, err.message);
    throw err;
  }
}
