/**
 * `snotra audit why RUN CALL [--db FILE | --state-dir DIR] [--config F] [--json]`
 *
 * Prints why one call ran (or did not): its chain from the audit log with the sequence number of
 * each link — proposed → decided (the rule) → approval requested → decided by whom, through which
 * surface and node, when → the arguments run hash-equal to the ones approved → started →
 * completed or failed (or the standing approval that allowed it). Read-only.
 *
 * Exit codes: 0 the chain closes; 1 it does not (a gap, a mismatch, a refusal, a hash that does
 * not verify: each is named), or the call is unknown, or the database cannot be read; 2 usage.
 * With --json the chain is one JSON object on stdout (errors `{"error":{"code","message"}}`).
 */
import { parseArgs } from 'node:util';
import {
  AuditUnavailableError,
  ConfigError,
  openAuditReader,
  type AuditReader,
  type Provenance,
} from '../../runtime/index.ts';
import { stateDirOf } from './state-dir.ts';

interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

const USAGE = 'usage: snotra audit why RUN CALL [--db FILE | --state-dir DIR] [--config F] [--json]\n';

/** Runs `snotra audit why` with the arguments after `why`. */
export function auditWhyCommand(argv: string[], io: Io, cwd: string): number {
  const json = argv.includes('--json');
  const fail = (code: string, message: string): number => {
    if (json) io.stdout(`${JSON.stringify({ error: { code, message } })}\n`);
    else io.stderr(`snotra audit why: ${message}\n${code === 'usage' ? USAGE : ''}`);
    return code === 'usage' ? 2 : 1;
  };
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        db: { type: 'string' },
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    return fail('usage', (error as Error).message);
  }
  if (values.help === true) {
    io.stdout(USAGE);
    return 0;
  }
  const [runId, callId, ...rest] = positionals;
  if (runId === undefined || callId === undefined || rest.length > 0)
    return fail('usage', 'needs exactly a run id and a call id');
  if (values.db !== undefined && (values['state-dir'] !== undefined || values.config !== undefined))
    return fail('usage', '--db is exclusive with --state-dir and --config');
  let reader: AuditReader;
  try {
    const stateDir =
      values.db === undefined
        ? stateDirOf(
            {
              'state-dir': values['state-dir'] as string | undefined,
              config: values.config as string | undefined,
            },
            cwd,
          )
        : undefined;
    reader = openAuditReader({ db: values.db as string | undefined, stateDir }, cwd);
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.code, error.message);
    const message = error instanceof AuditUnavailableError ? error.message : String(error);
    return fail('audit_unavailable', message);
  }
  try {
    const provenance = reader.provenance(runId, callId);
    if (provenance === null)
      return fail(
        'unknown_call',
        `the audit log has no event of call ${JSON.stringify(callId)} of run ${JSON.stringify(runId)}`,
      );
    io.stdout(json ? `${JSON.stringify(provenance)}\n` : formatProvenance(provenance));
    return provenance.closed ? 0 : 1;
  } finally {
    reader.close();
  }
}

// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const safe = (t: string) => t.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The chain as readable lines: one per link, `#seq` first, then whether it closes and why not. */
export function formatProvenance(p: Provenance): string {
  const lines = [`call ${p.callId} of run ${p.runId}${p.tool === null ? '' : ` (${p.tool})`}`];
  for (const s of p.steps) {
    const where = s.seq === null ? '     ' : `#${s.seq}`.padEnd(5);
    const when = s.at === null ? '' : ` ${new Date(s.at).toISOString()}`;
    lines.push(`  ${where} ${s.step.padEnd(18)}${when}  ${s.summary}`);
  }
  if (p.closed) lines.push('the chain closes: every link is recorded, in order, and the hash chain verifies');
  else for (const problem of p.problems) lines.push(`NOT CLOSED: ${problem}`);
  return `${safe(lines.join('\n'))}\n`;
}
