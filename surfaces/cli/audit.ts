/**
 * `snotra audit [--db FILE | --state-dir DIR] [--config F] [--run R] [--json] [--verify]`
 * (`snotra audit why RUN CALL` is audit-why.ts)
 *
 * Prints the audit trail (of one run with --run, else all events) from the database, read-only:
 * one JSON line per event with --json, one readable line otherwise. --verify walks the whole
 * hash chain and names the first broken event. The database is `<state-dir>/snotra.db`
 * (the state dir of `--config F` or `./snotra.config.json` or the embedded defaults, outside the
 * workspace) or the file given with --db.
 *
 * Exit codes (README's table, as every command): 0 ok; 1 the chain is broken, or the database is
 * missing, unreadable or damaged, or the config is invalid (the error's code says which); 2 usage
 * error (bad flags). With --json an error is `{"error":{"code","message"}}` on stdout.
 */
import { parseArgs as parseArgsUtil } from 'node:util';
import {
  type AuditEvent,
  type AuditReader,
  AuditUnavailableError,
  type ChainVerification,
  ConfigError,
  didYouMean,
  openAuditReader,
} from '../../runtime/index.ts';
import { stateDirOf } from './state-dir.ts';

/** Where `auditCommand` writes. */
export interface AuditIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

interface AuditArgs {
  db?: string;
  stateDir?: string;
  config?: string;
  run?: string;
  json: boolean;
  verify: boolean;
  help: boolean;
}

const USAGE =
  'usage: snotra audit [--db FILE | --state-dir DIR] [--config F] [--run R] [--json] [--verify]\n';

const FLAGS = ['--db', '--state-dir', '--config', '--run', '--json', '--verify', '--help'];

/** Exit codes of `snotra audit`. */
export const AuditExit = { ok: 0, chainBroken: 1, failure: 1, usage: 2 } as const;

/**
 * Runs `snotra audit` with the arguments after `audit`. Never throws for expected failures:
 * returns the exit code and writes the explanation to `io.stderr`. Relative paths resolve
 * against `cwd`.
 */
export async function auditCommand(
  argv: string[],
  io: AuditIo,
  cwd: string = process.cwd(),
): Promise<number> {
  if (argv[0] === 'why') return (await import('./audit-why.ts')).auditWhyCommand(argv.slice(1), io, cwd);
  // With --json an error is one JSON object on stdout, as for every command.
  const json = argv.includes('--json');
  const fail = (code: string, message: string, text: string): number => {
    if (json) io.stdout(`${JSON.stringify({ error: { code, message } })}\n`);
    else io.stderr(text);
    return code === 'usage' ? AuditExit.usage : AuditExit.failure;
  };
  const parsed = parseArgs(argv);
  if (typeof parsed === 'string') return fail('usage', parsed, `snotra audit: ${parsed}\n${USAGE}`);
  if (parsed.help) {
    io.stdout(USAGE);
    return AuditExit.ok;
  }
  let reader: AuditReader;
  try {
    const stateDir =
      parsed.db === undefined
        ? stateDirOf({ 'state-dir': parsed.stateDir, config: parsed.config }, cwd)
        : undefined;
    reader = openAuditReader({ db: parsed.db, stateDir }, cwd, { integrityCheck: parsed.verify });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.code, error.message, `${error.message}\n`);
    const message = error instanceof AuditUnavailableError ? error.message : String(error);
    return fail('audit_unavailable', message, `snotra audit: ${message}\n`);
  }
  try {
    if (parsed.run !== undefined || !parsed.verify) {
      for (const event of reader.events(parsed.run)) {
        io.stdout(parsed.json ? `${JSON.stringify(event)}\n` : `${formatEvent(event)}\n`);
      }
    }
    if (!parsed.verify) return AuditExit.ok;
    const result = reader.verify();
    io.stdout(parsed.json ? `${JSON.stringify({ verify: result })}\n` : `${formatVerification(result)}\n`);
    return result.ok ? AuditExit.ok : AuditExit.chainBroken;
  } catch (error) {
    // A damaged page met while reading: the file cannot be trusted or checked (not "chain broken").
    const code = (error as { code?: unknown }).code;
    if (code !== 'SQLITE_CORRUPT' && code !== 'SQLITE_NOTADB') throw error;
    const message = `cannot read the audit log at ${reader.file}: the database is damaged (${(error as Error).message})`;
    return fail('audit_damaged', message, `snotra audit: ${message}\n`);
  } finally {
    reader.close();
  }
}

const OPTIONS = {
  db: { type: 'string' },
  'state-dir': { type: 'string' },
  config: { type: 'string' },
  run: { type: 'string' },
  json: { type: 'boolean' },
  verify: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags through node:util's parser (as every command), checked token by token so each error names its flag. */
function parseArgs(argv: readonly string[]): AuditArgs | string {
  const args: AuditArgs = { json: false, verify: false, help: false };
  const { tokens } = parseArgsUtil({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind !== 'option') return `unknown argument ${JSON.stringify(argv[t.index])}`;
    if (!Object.hasOwn(OPTIONS, t.name))
      return `unknown argument ${JSON.stringify(argv[t.index])}${didYouMean(t.rawName, FLAGS)}`;
    const name = t.name as keyof typeof OPTIONS;
    if (OPTIONS[name].type === 'boolean') {
      if (t.inlineValue === true) return `${t.rawName} takes no value`;
      if (name === 'json') args.json = true;
      else if (name === 'verify') args.verify = true;
      else args.help = true;
      continue;
    }
    // A following flag is not a value: `--run --json` is a missing run id.
    const v = t.value;
    if (v === undefined || v === '' || (t.inlineValue !== true && v.startsWith('--')))
      return `${t.rawName} needs a value`;
    if (name === 'db') args.db = v;
    else if (name === 'state-dir') args.stateDir = v;
    else if (name === 'config') args.config = v;
    else args.run = v;
  }
  // --state-dir wins over --config, as for every state command; --db names the file itself.
  if (args.db !== undefined && (args.stateDir !== undefined || args.config !== undefined))
    return '--db is exclusive with --state-dir and --config';
  return args;
}

/**
 * One readable line per event. Control and bidi-override characters are escaped, so stored text
 * cannot drive or disguise the terminal.
 */
export function formatEvent(event: AuditEvent): string {
  const parts = [new Date(event.at).toISOString(), `#${event.seq}`, event.kind];
  const fields: Array<[string, string | null]> = [
    ['run', event.runId],
    ['call', event.callId],
    ['session', event.sessionId],
    ['agent', event.agentId],
    ['surface', event.surface],
    ['tool', event.tool],
    ['risk', event.risk],
    ['rule', event.ruleId],
    ['resource', event.resource],
    ['status', event.status],
    ['standing', event.standingApprovalId],
  ];
  for (const [name, value] of fields) if (value !== null) parts.push(`${name}=${value}`);
  if (
    event.detail !== null &&
    !(typeof event.detail === 'object' && Object.keys(event.detail).length === 0)
  ) {
    parts.push(JSON.stringify(event.detail));
  }
  return escapeControl(parts.join(' '));
}

function formatVerification(result: ChainVerification): string {
  if (result.ok) return `audit chain ok: ${result.count} events verified`;
  return `audit chain BROKEN at event #${result.brokenSeq} (${result.reason}): ${result.message}; ${result.count} events before it verified`;
}

// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escapeControl(text: string): string {
  return text.replace(UNSAFE_CHARS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
