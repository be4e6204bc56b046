import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  AuditUnavailableError,
  createPolicyChecker,
  openAuditReader,
  recordedCalls,
  replayCalls,
  resolveConfig,
  type ReplayReport,
} from '../../runtime/index.ts';
import { UsageError, type CliIo } from './io.ts';

const USAGE = 'usage: snotra policy replay --config F [--state-dir D] [--since 7d] [--agent A] [--json]';

/** Exit codes of `snotra policy replay`: 3 when the proposed config loosens a recorded call. */
export const ReplayExit = { ok: 0, failure: 1, usage: 2, looser: 3 } as const;

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `7d`, `12h`, `30m`, `2w` before `now`, or an ISO date; null when it is neither. */
export function sinceOf(text: string, now: number): number | null {
  const m = /^(\d{1,6})([mhdw])$/.exec(text);
  if (m !== null) return now - Number(m[1]) * (UNITS[m[2] as string] as number);
  const t = Date.parse(text);
  return /^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(t) ? t : null;
}

/** The report as text: each group of changes with its calls, then the rules no call was decided by. */
export function replayText(r: ReplayReport): string {
  const out = [
    `replayed ${r.replayed} recorded calls${r.skipped > 0 ? ` (${r.skipped} of unknown agents skipped)` : ''}`,
  ];
  const names = Object.keys(r.groups);
  if (names.length === 0) out.push('no decision changes');
  for (const name of names) {
    const changes = r.groups[name] ?? [];
    out.push('', `${name} (${changes.length})${changes[0]?.looser ? ' LOOSER' : ''}:`);
    for (const c of changes)
      out.push(`  #${c.seq} run ${c.runId} call ${c.callId} agent ${c.agentId} ${c.tool}  (rule ${c.rule})`);
  }
  out.push('', 'rules no recorded call is decided by:');
  if (r.unusedRules.length === 0) out.push('  (none)');
  for (const u of r.unusedRules) out.push(`  agent ${u.agent}: ${u.rule}`);
  out.push('', r.looser > 0 ? `${r.looser} calls would be decided more loosely` : 'nothing gets looser');
  // eslint-disable-next-line no-control-regex
  return `${out.join('\n').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?')}\n`;
}

/**
 * `snotra policy replay --config proposed.json [--state-dir D] [--since 7d] [--agent A] [--json]`:
 * evaluates every call recorded in the audit (of `--state-dir`, else the proposed config's state
 * dir) again under the proposed config, and prints the calls whose decision would change,
 * grouped by change, and the proposed rules no recorded call is decided by. Exit 0 when nothing
 * gets looser, 3 when something does (a CI gate for a config change), 1 on an error, 2 usage.
 */
export async function policyReplayCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        'state-dir': { type: 'string' },
        since: { type: 'string' },
        agent: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.config === undefined) throw new UsageError(`--config names the proposed config\n${USAGE}`);
  const since = values.since === undefined ? undefined : sinceOf(values.since, Date.now());
  if (since === null)
    throw new UsageError(
      `--since ${JSON.stringify(values.since)}: give 7d, 12h, 30m, 2w or an ISO date\n${USAGE}`,
    );
  const loaded = resolveConfig(values.config, cwd);
  if (values.agent !== undefined && !Object.hasOwn(loaded.config.agents, values.agent))
    throw new UsageError(`--agent ${JSON.stringify(values.agent)}: the proposed config has no such agent`);
  const stateDir =
    values['state-dir'] === undefined ? loaded.config.stateDir : resolve(cwd, values['state-dir']);
  let reader;
  try {
    reader = openAuditReader({ stateDir }, cwd);
  } catch (error) {
    if (!(error instanceof AuditUnavailableError)) throw error;
    const message = error.message;
    io.stdout(values.json ? `${JSON.stringify({ error: { code: error.code, message } })}\n` : '');
    if (!values.json) io.stderr(`snotra policy replay: ${message}\n`);
    return ReplayExit.failure;
  }
  let report: ReplayReport;
  try {
    const calls = recordedCalls(reader.events(), {
      ...(since === undefined ? {} : { since }),
      ...(values.agent === undefined ? {} : { agent: values.agent }),
    });
    const checker = await createPolicyChecker(loaded, {
      detectSandbox: () => ({ name: 'none', reason: 'replay' }),
    });
    report = replayCalls(calls, loaded.config, checker.check);
  } finally {
    reader.close();
  }
  io.stdout(values.json ? `${JSON.stringify(report)}\n` : replayText(report));
  return report.looser > 0 ? ReplayExit.looser : ReplayExit.ok;
}
