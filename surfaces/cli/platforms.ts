import {
  BadCursorError,
  MAX_UNDELIVERED_PAGE,
  listPlatforms,
  pairAsLocalUser,
  unpairAsLocalUser,
  type UndeliveredPaging,
} from '../../runtime/index.ts';
import { CommandFailure, ExitCode, UsageError, type CliIo } from './io.ts';
import { oneLine } from './run/escape.ts';
import { parseStateArgs, stateDirOf } from './state-dir.ts';

const USAGE =
  'usage: snotra platforms list [--limit N] [--after CURSOR] [--json]\n' +
  '       snotra platforms pair ID CODE [--json]\n' +
  '       snotra platforms unpair ID CHAT [--json]\n' +
  '  (all take --state-dir D or --config F)';

/** `--limit N` and `--after CURSOR` of `platforms list`, as parsed with the other flags. */
function pagingOf(values: Record<string, string | boolean | undefined>): UndeliveredPaging {
  const limitText = values.limit;
  const afterText = values.after;
  let limit: number | undefined;
  if (typeof limitText === 'string') {
    limit = Number(limitText);
    if (!/^\d{1,4}$/.test(limitText) || limit < 1 || limit > MAX_UNDELIVERED_PAGE)
      throw new UsageError(
        `--limit: expected 1 to ${MAX_UNDELIVERED_PAGE}, got ${JSON.stringify(limitText)}\n${USAGE}`,
      );
  }
  return { limit, after: typeof afterText === 'string' ? afterText : undefined };
}

/** `snotra platforms list|pair|unpair`: the platform chats as the local user manages them. */
export async function platformsCommand(argv: string[], io: CliIo, cwd: string): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseStateArgs(rest, USAGE, action === 'list' ? ['limit', 'after'] : []);
  const stateDir = stateDirOf(values, cwd);
  switch (action) {
    case 'list': {
      if (positionals.length > 0) throw new UsageError(`platforms list takes no arguments\n${USAGE}`);
      const paging = pagingOf(values);
      let view: ReturnType<typeof listPlatforms>;
      try {
        view = listPlatforms(stateDir, paging);
      } catch (err) {
        if (err instanceof BadCursorError) throw new CommandFailure(err.code, `--after: ${err.message}`);
        throw err;
      }
      if (values.json) {
        io.stdout(`${JSON.stringify(view)}\n`);
        return ExitCode.ok;
      }
      const active = view.chats.filter((c) => c.unpairedAt === null);
      if (active.length === 0) io.stdout('no paired chats\n');
      for (const c of active)
        io.stdout(
          `${oneLine(`${c.platformId}  chat ${c.chatId}  ${c.label ?? '-'}  paired ${new Date(c.pairedAt).toISOString()} by ${c.pairedBy}`, 600)}\n`,
        );
      for (const [id, n] of Object.entries(view.pendingCodes))
        io.stdout(`${id}: ${n} open pairing code(s)\n`);
      for (const u of view.undelivered)
        io.stdout(
          `${oneLine(`undelivered: ${u.key} part ${u.part + 1}/${u.parts} ${u.status}: ${u.error ?? ''}`, 600)}\n`,
        );
      if (view.next !== null)
        io.stdout(
          `more undelivered: snotra platforms list --limit ${paging.limit ?? MAX_UNDELIVERED_PAGE} --after ${view.next}\n`,
        );
      return ExitCode.ok;
    }
    case 'pair': {
      const [id, code, ...extra] = positionals;
      if (id === undefined || code === undefined || extra.length > 0)
        throw new UsageError(`platforms pair needs a connection id and the code the bot sent\n${USAGE}`);
      const r = pairAsLocalUser(stateDir, id, code);
      if (!r.ok) throw new CommandFailure(r.reason, `${r.reason}: ${r.message}`);
      const out = { platform: id, chatId: r.chat.chatId, label: r.chat.label, pairedBy: r.user };
      io.stdout(
        values.json
          ? `${JSON.stringify(out)}\n`
          : `${oneLine(`${id}: chat ${r.chat.chatId} (${r.chat.label ?? 'no name'}) paired by ${r.user}`, 600)}\n`,
      );
      return ExitCode.ok;
    }
    case 'unpair': {
      const [id, chat, ...extra] = positionals;
      if (id === undefined || chat === undefined || extra.length > 0)
        throw new UsageError(`platforms unpair needs a connection id and a chat id\n${USAGE}`);
      const chatId = Number(chat);
      if (!/^-?\d{1,16}$/.test(chat) || !Number.isSafeInteger(chatId))
        throw new UsageError(`CHAT: expected a chat id (an integer), got ${JSON.stringify(chat)}\n${USAGE}`);
      const r = unpairAsLocalUser(stateDir, id, chatId);
      if (!r.ok) throw new CommandFailure('not_paired', `${id}: chat ${chatId} is not paired`);
      io.stdout(
        values.json
          ? `${JSON.stringify({ platform: id, chatId, unpairedBy: r.user })}\n`
          : `${id}: chat ${chatId} unpaired by ${r.user}\n`,
      );
      return ExitCode.ok;
    }
    default:
      throw new UsageError(USAGE);
  }
}
