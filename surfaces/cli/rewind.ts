/**
 * `snotra rewind --list [--run R] [--session S]` and `snotra rewind CHECKPOINT [--dry-run]`:
 * the checkpoints taken before calls that could change a read-write root, and putting the roots
 * back to one — the diff first, then the restore (audited `rewind`, undoable through the
 * checkpoint it takes first). Calls since then whose effects left the machine are listed as not
 * rewindable, with what they reached and when, so a human can compensate.
 */
import { parseArgs } from 'node:util';
import {
  rewindCheckpoint,
  rewindList,
  type Change,
  type CheckpointSummary,
  type ExternalEffect,
  type RewindOutcome,
} from '../../runtime/index.ts';
import { ClientError } from '../client/errors.ts';
import { rewindThroughRunning } from '../client/rewind.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra rewind --list [--run R] [--session S] [--json] | snotra rewind CHECKPOINT [--dry-run] [--json]  (with --state-dir D or --config F)';
const MAX_PATHS_SHOWN = 20;

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        list: { type: 'boolean', default: false },
        run: { type: 'string' },
        session: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
}

const time = (at: number): string => new Date(at).toISOString();

/** One changed path of a rewind or a checkpoint, on one line. */
export function changeLine(c: Change): string {
  const where = c.change === 'renamed' ? `${c.from ?? '?'} -> ${c.path}` : c.path;
  return oneLine(`  ${c.change.padEnd(8)} ${c.root}:${where}`, 2000);
}

function listLine(c: CheckpointSummary): string {
  const who = c.runId === null ? '(rewind)' : `run=${c.runId} call=${c.callId ?? '-'}`;
  const roots = c.roots.map((r) => r.id).join(',');
  return oneLine(
    `${c.id}  ${time(c.at)}  ${c.tool}  ${who}  roots=${roots}  changed since: ${c.changedSince.length}`,
    2000,
  );
}

/** One call whose effect left the machine (not rewindable), on one line. */
export function effectLine(e: ExternalEffect): string {
  const what = e.target === null ? e.tool : `${e.tool} -> ${e.target}`;
  const maybe = e.status === 'completed' ? '' : ' (may or may not have happened)';
  return oneLine(`  ${what} at ${time(e.at)}${maybe} (run ${e.runId ?? '-'}, call ${e.callId ?? '-'})`, 2000);
}

function printReport(io: CliIo, r: RewindOutcome): void {
  const head = r.dryRun ? `rewind to ${r.checkpoint.id} would change` : `rewound to ${r.checkpoint.id}`;
  io.stdout(`${oneLine(head, 300)} (${r.changes.length} path${r.changes.length === 1 ? '' : 's'}):\n`);
  for (const c of r.changes) io.stdout(`${changeLine(c)}\n`);
  for (const p of r.patches) io.stdout(`${p.diff}\n`);
  if (r.notRewindable.length > 0) {
    io.stdout('not rewindable (their effects left the machine; compensate by hand):\n');
    for (const e of r.notRewindable) io.stdout(`${effectLine(e)}\n`);
  }
  if (r.undo !== null) io.stdout(`undo this rewind with: snotra rewind ${r.undo}\n`);
}

/** `snotra rewind`: list checkpoints, or rewind to one. */
export async function rewindCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const { values, positionals } = parse(argv);
  const stateDir = stateDirOf(values, cwd);
  if (values.list) {
    if (positionals.length > 0 || values['dry-run'])
      throw new UsageError(`rewind --list takes no checkpoint and no --dry-run\n${USAGE}`);
    const list = rewindList(stateDir, {
      ...(values.run === undefined ? {} : { runId: values.run }),
      ...(values.session === undefined ? {} : { sessionId: values.session }),
    });
    for (const c of list) {
      if (values.json) {
        io.stdout(`${JSON.stringify(c)}\n`);
        continue;
      }
      io.stdout(`${listLine(c)}\n`);
      for (const ch of c.changedSince.slice(0, MAX_PATHS_SHOWN)) io.stdout(`${changeLine(ch)}\n`);
      if (c.changedSince.length > MAX_PATHS_SHOWN)
        io.stdout(`  … ${c.changedSince.length - MAX_PATHS_SHOWN} more\n`);
    }
    if (!values.json && list.length === 0) io.stdout('no checkpoints\n');
    return ExitCode.ok;
  }
  if (values.run !== undefined || values.session !== undefined)
    throw new UsageError(`--run and --session go with --list\n${USAGE}`);
  const id = positionals[0];
  if (id === undefined || positionals.length > 1)
    throw new UsageError(`rewind needs one checkpoint id (or --list)\n${USAGE}`);
  // Beside a running `snotra start`, that runtime rewinds (locked against its live runs).
  let report: RewindOutcome;
  try {
    report =
      (await rewindThroughRunning(stateDir, id, values['dry-run'])) ??
      rewindCheckpoint(stateDir, id, { dryRun: values['dry-run'] });
  } catch (err) {
    if (err instanceof ClientError) throw new CommandFailure(err.code, err.message);
    throw err;
  }
  if (values.json) io.stdout(`${JSON.stringify(report)}\n`);
  else printReport(io, report);
  return ExitCode.ok;
}
