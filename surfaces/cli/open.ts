import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { ClientError } from '../client/errors.ts';
import { askLoginUrl } from '../client/login.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { stateDirOf } from './state-dir.ts';

const USAGE = 'usage: snotra open [--config F | --state-dir D] [--print]';

/** The program that opens a URL in the user's browser, per platform. */
function opener(url: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [url] };
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', url] };
  return { command: 'xdg-open', args: [url] };
}

/**
 * `snotra open`: opens the web app of the runtime running on the state dir in the user's
 * browser, through a single-use login code (60 s) the browser exchanges for a cookie session of
 * that launch. `--print` prints the URL instead (headless machines, tests). The launch token is
 * never in the URL.
 */
export async function openCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'state-dir': { type: 'string' },
        print: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.config !== undefined && values['state-dir'] !== undefined)
    throw new UsageError(`give --config F or --state-dir D, not both\n${USAGE}`);
  const stateDir = stateDirOf(values, cwd);
  let login: { url: string; pid: number };
  try {
    login = await askLoginUrl(stateDir);
  } catch (err) {
    if (err instanceof ClientError) throw new CommandFailure(err.code, err.message);
    throw err;
  }
  if (values.print) {
    io.stdout(`${login.url}\n`);
    return ExitCode.ok;
  }
  const { command, args } = opener(login.url);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CommandFailure(
          'no_browser_opener',
          `cannot run ${command} (${err.code ?? err.message}) to open the browser; \`snotra open --print\` prints the URL to open yourself (it works once, within 60 s)`,
        ),
      ),
    );
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
  });
  io.stdout(`opened the web app of the runtime (pid ${login.pid}) in your browser\n`);
  return ExitCode.ok;
}
