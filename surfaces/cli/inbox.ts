import { parseArgs } from 'node:util';
import { type ApprovalRecord, decideAsLocalUser, listPending, showApproval } from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra inbox list [--session S] [--task T] [--agent A] [--json]\n' +
  '       snotra inbox show ID [--json]\n' +
  '       snotra inbox approve ID [--reason TEXT] | deny ID [--reason TEXT]\n' +
  "  (a denial's reason is shown to the model, which may then try something else)\n" +
  '  (all take --state-dir D or --config F)';

function line(a: ApprovalRecord & { readonly node?: string | null }): string {
  const when = new Date(a.expiresAt).toISOString();
  // Cluster mode: the node that parked it.
  const node = a.node === undefined ? '' : `  node=${a.node ?? '-'}`;
  // Escaped: tool names, targets and reasons may come from a model or an MCP server.
  return oneLine(
    `${a.id}  ${a.status}  ${a.agentId}  ${a.tool} (${a.risk})  ${a.reason}  target=${a.target ?? '-'}  expires=${when}${node}`,
    4000,
  );
}

function decisionLine(a: ApprovalRecord): string {
  if (a.status === 'pending') return '';
  const by = a.decidedBy === null ? '' : ` by ${a.decidedBy}`;
  const why = a.decisionReason === null ? '' : `: ${a.decisionReason}`;
  return `  decision: ${oneLine(`${a.status}${by}${why}`, 1200)}\n`;
}

/** `snotra inbox list|show|approve|deny`: the Inbox as the local user sees it. */
export async function inboxCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        'state-dir': { type: 'string' },
        config: { type: 'string' },
        session: { type: 'string' },
        task: { type: 'string' },
        agent: { type: 'string' },
        json: { type: 'boolean', default: false },
        reason: { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const stateDir = stateDirOf(values, cwd);
  switch (action) {
    case 'list': {
      const filter = {
        ...(values.session ? { sessionId: values.session } : {}),
        ...(values.task ? { taskId: values.task } : {}),
        ...(values.agent ? { agentId: values.agent } : {}),
      };
      const pending = listPending(stateDir, filter);
      for (const a of pending) io.stdout(`${values.json ? JSON.stringify(a) : line(a)}\n`);
      if (!values.json && pending.length === 0) io.stdout('no pending approvals\n');
      return ExitCode.ok;
    }
    case 'show': {
      const id = positionals[0];
      if (id === undefined) throw new UsageError(`inbox show needs an approval id\n${USAGE}`);
      const a = showApproval(stateDir, id);
      if (a === null) throw new CommandFailure('not_found', `no approval ${JSON.stringify(id)}`);
      io.stdout(
        values.json
          ? `${JSON.stringify(a)}\n`
          : `${line(a)}\n  args: ${oneLine(JSON.stringify(a.args) ?? 'null', 4000)}\n  rule: ${oneLine(a.ruleId, 300)}\n${decisionLine(a)}`,
      );
      return ExitCode.ok;
    }
    case 'approve':
    case 'deny': {
      const id = positionals[0];
      if (id === undefined) throw new UsageError(`inbox ${action} needs an approval id\n${USAGE}`);
      const reason = values.reason?.trim();
      if (
        values.reason !== undefined &&
        (reason === undefined || reason.length === 0 || reason.length > 1000)
      )
        throw new UsageError(`--reason must be 1 to 1000 characters\n${USAGE}`);
      const { result, notified, user } = await decideAsLocalUser(
        stateDir,
        id,
        action === 'approve' ? 'approved' : 'denied',
        reason,
      );
      if (!result.ok) throw new CommandFailure(result.reason, `${result.reason}: ${result.message}`);
      const out = { id, status: result.approval.status, decidedBy: user, runtimeNotified: notified };
      io.stdout(
        values.json
          ? `${JSON.stringify(out)}\n`
          : `${id}: ${result.approval.status} by ${user}${notified ? '' : ' (no runtime running: the run resumes at its next start)'}\n`,
      );
      return ExitCode.ok;
    }
    default:
      throw new UsageError(USAGE);
  }
}
