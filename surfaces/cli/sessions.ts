import { listSessions, removeSession, showSession } from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { parseStateArgs, stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra sessions list [--json] | snotra sessions show SESSION [--json] | snotra sessions rm SESSION [--json]\n' +
  '  (with --state-dir D or --config F)';

/** One transcript entry as one line of text: who said what (tool calls and results shortened). */
function entryLine(entry: unknown): string {
  const e = entry as {
    role?: string;
    text?: string;
    calls?: { tool?: string; args?: unknown }[];
    observation?: { kind?: string; tool?: string; content?: unknown; message?: string };
  };
  if (e.role === 'user') return `user: ${oneLine(e.text ?? '', 500)}`;
  if (e.role === 'assistant') {
    const calls = (e.calls ?? []).map(
      (c) => `${c.tool ?? '?'} ${oneLine(JSON.stringify(c.args) ?? '', 200)}`,
    );
    const text = e.text === undefined || e.text === '' ? [] : [oneLine(e.text, 500)];
    return `assistant: ${[...text, ...calls.map((c) => `[call ${c}]`)].join(' ')}`;
  }
  const o = e.observation ?? {};
  const body =
    typeof o.content === 'string' ? o.content : (JSON.stringify(o.content ?? o.message ?? '') ?? '');
  return `${o.kind ?? 'observation'} ${o.tool ?? '?'}: ${oneLine(body, 200)}`;
}

/** `snotra sessions list|show|rm`: durable conversations of a state dir. */
export async function sessionsCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseStateArgs(rest, USAGE);
  const stateDir = stateDirOf(values, cwd);
  if (action === 'list') {
    if (positionals.length > 0) throw new UsageError(USAGE);
    for (const s of listSessions(stateDir)) {
      io.stdout(
        values.json
          ? `${JSON.stringify(s)}\n`
          : `${oneLine(s.sessionId, 200)}  agent=${s.agentId}  runs=${s.runs}  entries=${s.entries}  updated=${new Date(s.updatedAt).toISOString()}${s.activeRunId === null ? '' : `  active=${oneLine(s.activeRunId, 200)}`}  ${oneLine(s.title ?? '', 80)}\n`,
      );
    }
    return ExitCode.ok;
  }
  const id = positionals[0];
  if (id === undefined || positionals.length > 1) throw new UsageError(USAGE);
  if (action === 'show') {
    const found = showSession(stateDir, id);
    if (found === null)
      throw new CommandFailure('session_not_found', `no session ${JSON.stringify(oneLine(id, 200))}`);
    if (values.json) {
      io.stdout(`${JSON.stringify(found)}\n`);
      return ExitCode.ok;
    }
    const s = found.session;
    io.stdout(
      `session ${oneLine(s.sessionId, 200)}  agent=${s.agentId}  runs=${s.runs}  workspace=${oneLine(s.workspace, 500)}\n`,
    );
    const u = found.usage;
    if (u !== null)
      io.stdout(
        `usage: input=${u.inputTokens} output=${u.outputTokens} tokens${u.costUsd === undefined ? '' : ` cost=${u.costUsd.toFixed(4)} USD`}\n`,
      );
    const c = found.compaction;
    if (c !== null)
      io.stdout(`summary of entries 0–${c.throughSeq - 1} (compacted): ${oneLine(c.summary, 2000)}\n`);
    for (const m of found.messages) io.stdout(`${m.seq}${m.compacted ? '~' : ''}  ${entryLine(m.entry)}\n`);
    return ExitCode.ok;
  }
  if (action === 'rm') {
    removeSession(stateDir, id);
    io.stdout(values.json ? `${JSON.stringify({ removed: id })}\n` : `removed session ${oneLine(id, 200)}\n`);
    return ExitCode.ok;
  }
  throw new UsageError(USAGE);
}
