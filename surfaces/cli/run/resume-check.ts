import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listPending, showRun } from '../../../runtime/index.ts';
import { CommandFailure, ExitCode, type CliIo } from '../io.ts';
import { oneLine } from './escape.ts';

/**
 * Checks a run named by `--resume` before a runtime starts on (or is joined on) its state dir:
 * unknown runs fail, a run still waiting on an undecided approval stays parked (exit 20 with the
 * Inbox id). Returns null when the run should be resumed. Its own module, loaded only for
 * `--resume`: the store's readers stay out of every other run's start-up.
 */
export function precheckResume(stateDir: string, json: boolean, io: CliIo, runId: string): number | null {
  const run = existsSync(join(stateDir, 'snotra.db')) ? showRun(stateDir, runId) : null;
  if (run === null)
    throw new CommandFailure('not_found', `no run ${JSON.stringify(oneLine(runId, 200))} in ${stateDir}`);
  if (run.summary.status !== 'waiting_for_approval') return null;
  const pending = listPending(stateDir).find((a) => a.runId === runId);
  if (pending === undefined) return null;
  const text = `run ${runId} still waits for approval ${pending.id}: decide with \`snotra inbox approve|deny ${pending.id}\``;
  io[json ? 'stderr' : 'stdout'](`${oneLine(text, 1000)}\n`);
  if (json)
    io.stdout(`${JSON.stringify({ type: 'run.parked', runId, ts: Date.now(), approvalId: pending.id })}\n`);
  return ExitCode.parked;
}
