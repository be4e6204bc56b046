import { type GrantView, listGrants, revokeGrant } from '../../runtime/index.ts';
import { ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { parseStateArgs, stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra grants list [--json] | snotra grants revoke ID [--json]  (with --state-dir D or --config F)';

function line(g: GrantView): string {
  const owner = g.kind === 'session' ? `session=${g.sessionId}` : `task=${g.ownerTaskId}`;
  const when = new Date(g.createdAt).toISOString();
  return oneLine(
    `${g.id}  ${g.kind}  ${owner}  ${g.tool}  target=${g.target ?? '(any)'}  by=${g.grantedBy}  ${when}`,
    2000,
  );
}

/** `snotra grants list|revoke`: the session and standing approvals humans gave, and taking them back. */
export async function grantsCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseStateArgs(rest, USAGE);
  const stateDir = stateDirOf(values, cwd);
  switch (action) {
    case 'list': {
      if (positionals.length > 0) throw new UsageError(`grants list takes no arguments\n${USAGE}`);
      const grants = listGrants(stateDir);
      for (const g of grants) io.stdout(`${values.json ? JSON.stringify(g) : line(g)}\n`);
      if (!values.json && grants.length === 0) io.stdout('no active grants\n');
      return ExitCode.ok;
    }
    case 'revoke': {
      const id = positionals[0];
      if (id === undefined || positionals.length > 1)
        throw new UsageError(`grants revoke needs one grant id\n${USAGE}`);
      const { grant, user } = revokeGrant(stateDir, id);
      io.stdout(
        values.json
          ? `${JSON.stringify(grant)}\n`
          : `${oneLine(grant.id, 300)}: revoked by ${oneLine(user, 100)} (${grant.kind} grant for ${oneLine(grant.tool, 100)})\n`,
      );
      return ExitCode.ok;
    }
    default:
      throw new UsageError(USAGE);
  }
}
