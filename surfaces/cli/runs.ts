import { listRuns, showRun } from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { parseStateArgs, stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra runs list [--json] | snotra runs show RUN [--json]  (with --state-dir D or --config F)';

/** `snotra runs list|show`: persisted runs and their state. */
export async function runsCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseStateArgs(rest, USAGE);
  const stateDir = stateDirOf(values, cwd);
  if (action === 'list') {
    for (const r of listRuns(stateDir)) {
      io.stdout(
        values.json
          ? `${JSON.stringify(r)}\n`
          : `${r.runId}  ${r.status}  agent=${r.agentId}  surface=${r.surface}  updated=${new Date(r.updatedAt).toISOString()}\n`,
      );
    }
    return ExitCode.ok;
  }
  if (action === 'show') {
    const id = positionals[0];
    if (id === undefined) throw new UsageError(USAGE);
    const run = showRun(stateDir, id);
    if (run === null) throw new CommandFailure('not_found', `no run ${JSON.stringify(id)}`);
    // How the run ended (reason code and, for a failure, its redacted message), or null.
    const outcome = (run.context as { outcome?: unknown } | null)?.outcome ?? null;
    io.stdout(
      `${JSON.stringify(values.json ? { ...run, outcome } : { ...run.summary, outcome }, null, values.json ? 0 : 2)}\n`,
    );
    return ExitCode.ok;
  }
  throw new UsageError(USAGE);
}
