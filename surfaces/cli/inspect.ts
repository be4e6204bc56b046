import { parseArgs } from 'node:util';
import { type ActorStreamLine, type ActorWatch, NotRunningError, watchActors } from '../../runtime/index.ts';
import { CommandFailure, ExitCode, OutputClosedError, UsageError, type CliIo } from './io.ts';
import { LocalTree, renderTree } from './inspect/render.ts';
import { stateDirOf } from './state-dir.ts';

const USAGE = 'usage: snotra inspect [--json] [--state-dir D] [--config F]';

/**
 * `snotra inspect`: the live actor tree of the runtime running on the state dir, through its
 * control socket (the local user only). Prints the tree, then the tree again after each change;
 * `--json` prints the tree as one line (`{"type":"actors","seq","actors"}`) and then each change
 * as it comes (`{"type":"actor.created"|"actor.state"|"actor.stopped","seq","actor"}`). Ends with
 * 0 on SIGINT/SIGTERM or when the reader of its output goes away; 1 when no runtime runs or the
 * runtime stops.
 */
export async function inspectCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        json: { type: 'boolean', default: false },
        'state-dir': { type: 'string' },
        config: { type: 'string' },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const stateDir = stateDirOf(values, cwd);
  const json = values.json === true;
  const local = new LocalTree();
  let outputClosed = false;
  let refused: { code: string; message: string } | null = null;
  let watch: ActorWatch | null = null;
  const onLine = (line: ActorStreamLine) => {
    if (outputClosed) return;
    try {
      if (line.type === 'error') {
        refused = line.error;
        return;
      }
      if (line.type === 'stopped') return;
      if (line.type === 'actors') local.reset(line);
      else local.apply(line);
      io.stdout(
        json ? `${JSON.stringify(line)}\n` : renderTree(local.tree(), line.type === 'actors' ? null : line),
      );
    } catch (err) {
      if (!(err instanceof OutputClosedError)) throw err;
      outputClosed = true;
      watch?.cancel();
    }
  };
  try {
    watch = await watchActors(stateDir, onLine);
  } catch (err) {
    if (err instanceof NotRunningError) throw new CommandFailure(err.code, err.message);
    throw err;
  }
  const opened = watch;
  if (outputClosed) opened.cancel();
  // A write that hit EPIPE may be the last one for a while (nothing changes): end at its error,
  // not at the next write.
  const offClosed = io.onStdoutClosed?.(() => {
    outputClosed = true;
    opened.cancel();
  });
  const onSignal = () => opened.cancel();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let how;
  try {
    how = await opened.ended;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    offClosed?.();
  }
  if (outputClosed) throw new OutputClosedError('standard output was closed');
  if (how === 'cancelled') return ExitCode.ok;
  const problem = refused as { code: string; message: string } | null;
  if (problem !== null) throw new CommandFailure(problem.code, problem.message);
  if (how === 'stopped') throw new CommandFailure('runtime_stopped', 'the runtime stopped');
  throw new CommandFailure('runtime_gone', 'the connection to the runtime closed (it was stopped or killed)');
}
