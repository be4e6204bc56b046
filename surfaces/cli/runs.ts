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
    const usage = usageOf(run.context);
    io.stdout(
      `${JSON.stringify(values.json ? { ...run, outcome, usage } : { ...run.summary, outcome, usage }, null, values.json ? 0 : 2)}\n`,
    );
    return ExitCode.ok;
  }
  throw new UsageError(USAGE);
}

/**
 * The tokens of the run's own model calls, summed, as its providers reported them; null when
 * none reported any (a scripted model, a run stored before usage was kept).
 */
function usageOf(context: unknown): { inputTokens: number; outputTokens: number; costUsd?: number } | null {
  const tokens = (
    context as { tokens?: { inputTokens?: unknown; outputTokens?: unknown; costUsd?: unknown } } | null
  )?.tokens;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (tokens === undefined || tokens === null || !ok(tokens.inputTokens) || !ok(tokens.outputTokens))
    return null;
  const cost = tokens.costUsd;
  return {
    inputTokens: tokens.inputTokens,
    outputTokens: tokens.outputTokens,
    ...(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
  };
}
