import { parseArgs } from 'node:util';
import { listFirings } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { stateDirOf } from './state-dir.ts';

const USAGE = 'usage: snotra tasks [--task T] [--limit N] [--json]  (with --state-dir D or --config F)';

/**
 * `snotra tasks`: the scheduler's journal, newest first — every firing of a scheduled task,
 * whether it started a run (and which) or was skipped (and why).
 */
export async function tasksCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        task: { type: 'string' },
        limit: { type: 'string', default: '100' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const limit = Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new UsageError(
      `--limit: expected a positive integer, got ${JSON.stringify(values.limit)}\n${USAGE}`,
    );
  for (const f of listFirings(stateDirOf(values, cwd), values.task ?? null, limit)) {
    io.stdout(
      values.json
        ? `${JSON.stringify(f)}\n`
        : `${new Date(f.fireAt).toISOString()}  ${f.taskId}  ${f.status}  ${f.reason ?? ''}${f.runId === null ? '' : `  run=${f.runId}`}\n`,
    );
  }
  return ExitCode.ok;
}
