import type { ChatRuntime } from '../../client/chat.ts';
import { oneLine } from '../run/escape.ts';
import type { Paint } from '../run/paint.ts';

/** The slash commands, as `/help` lists them. */
export const SLASH_HELP: readonly (readonly [string, string])[] = [
  ['/help', 'this list'],
  ['/session', 'the current session; /session list, /session new [NAME], /session switch NAME'],
  ['/inbox', 'approvals waiting; /inbox approve ID, /inbox deny ID [REASON]'],
  ['/mode [allow|ask|deny]', 'the agent’s mode, or change it for this runtime'],
  ['/roots', 'the workspace roots'],
  ['/usage', 'tokens (and cost) used in this chat'],
  ['/rewind [ID [confirm]]', 'this session’s checkpoints; the diff back to one; confirm puts the files back'],
  ['/compact', 'summarize the conversation so far to free context'],
  ['/resume', 'go on with the turn Ctrl-C interrupted'],
  ['/exit', 'leave (Ctrl-D too)'],
];

/** The chat's state a slash command reads and changes. */
export interface SlashContext {
  readonly rt: ChatRuntime;
  readonly agent: string;
  readonly user: string;
  readonly paint: Paint;
  /** The session messages go to; null until the first message of a new one. */
  session: string | null;
  readonly usage: { inputTokens: number; outputTokens: number; costUsd: number; calls: number };
  say(text: string): void;
}

/** What a slash command asks of the chat loop. */
export type SlashOutcome = 'exit' | 'resume' | null;

/** Splits `/inbox deny ID some reason` into its words (the rest kept whole after `keep` words). */
export function words(line: string, keep = Infinity): string[] {
  const parts = line.trim().split(/\s+/);
  if (parts.length <= keep) return parts;
  return [...parts.slice(0, keep), parts.slice(keep).join(' ')];
}

const MODES = ['allow', 'ask', 'deny'] as const;

/** Runs one slash command line (it starts with `/`). Unknown commands say so and list the known ones. */
export async function runSlash(ctx: SlashContext, line: string): Promise<SlashOutcome> {
  const [name = '', ...rest] = words(line, 3);
  switch (name) {
    case '/help':
    case '/?': {
      const width = Math.max(...SLASH_HELP.map(([c]) => c.length));
      ctx.say(
        [
          ...SLASH_HELP.map(([c, d]) => `  ${ctx.paint.bold(c.padEnd(width))}  ${d}`),
          '  A line ending with \\ goes on on the next line. Ctrl-C interrupts a turn; twice within 2 s exits.',
        ].join('\n'),
      );
      return null;
    }
    case '/exit':
    case '/quit':
      return 'exit';
    case '/session':
      await sessionCommand(ctx, rest);
      return null;
    case '/inbox':
      await inboxCommand(ctx, rest);
      return null;
    case '/mode': {
      const wanted = rest[0];
      if (wanted === undefined) {
        const mode = (await ctx.rt.agentModes()).find((a) => a.id === ctx.agent)?.mode ?? '?';
        ctx.say(`mode of ${oneLine(ctx.agent, 80)}: ${mode}`);
        return null;
      }
      if (!(MODES as readonly string[]).includes(wanted)) {
        ctx.say(`/mode: ${JSON.stringify(oneLine(wanted, 40))} is not a mode; modes: ${MODES.join(', ')}`);
        return null;
      }
      await ctx.rt.setMode(ctx.agent, wanted as (typeof MODES)[number], ctx.user);
      ctx.say(
        `mode of ${oneLine(ctx.agent, 80)} is now ${wanted} (until the runtime stops${ctx.rt.kind === 'joined' ? `: the running one, pid ${ctx.rt.pid}, for every surface` : ''}; audited)`,
      );
      return null;
    }
    case '/roots': {
      // The runtime's roots now (a joined chat: the running runtime's), not this chat's config.
      const now = await ctx.rt.authorityNow(ctx.agent);
      const whose =
        ctx.rt.kind === 'joined' ? `the running runtime (pid ${ctx.rt.pid})` : 'this chat’s runtime';
      ctx.say(`roots of ${whose} now; mode of ${oneLine(ctx.agent, 80)}: ${now.mode}`);
      if (now.roots.length === 0) ctx.say('  (none: no file can be read or written)');
      for (const r of now.roots)
        ctx.say(
          `  ${oneLine(r.id, 60)}  ${oneLine(r.path, 300)}  ${r.access}${r.primary ? '  (primary)' : ''}${r.deny.length > 0 ? `  deny: ${oneLine(r.deny.join(', '), 200)}` : ''}`,
        );
      return null;
    }
    case '/usage': {
      const u = ctx.usage;
      const cost = u.costUsd > 0 ? `, $${u.costUsd.toFixed(4)}` : '';
      ctx.say(
        `this chat: ${u.calls} model calls, ${u.inputTokens} tokens in, ${u.outputTokens} tokens out${cost}`,
      );
      return null;
    }
    case '/compact':
      await compactCommand(ctx);
      return null;
    case '/rewind': {
      // Loaded only when asked: its diff lines come with the rewind's modules (the store's among them).
      const { rewindSlash } = await import('./rewind.ts');
      await rewindSlash(ctx, rest);
      return null;
    }
    case '/resume':
      return 'resume';
    default:
      ctx.say(
        `unknown command ${JSON.stringify(oneLine(name, 40))}; commands: ${SLASH_HELP.map(([c]) => c.split(' ')[0]).join(' ')}`,
      );
      return null;
  }
}

async function compactCommand(ctx: SlashContext): Promise<void> {
  if (ctx.session === null) {
    ctx.say('/compact: nothing to compact yet (this session has no messages)');
    return;
  }
  try {
    const done = await ctx.rt.compact(ctx.session);
    if (!done.compacted) {
      ctx.say(`/compact: nothing new to compact in session ${oneLine(ctx.session, 200)}`);
      return;
    }
    const tokens =
      done.usage === null ? '' : ` (${done.usage.inputTokens} tokens in, ${done.usage.outputTokens} out)`;
    ctx.say(
      `compacted ${done.summarized} entries of session ${oneLine(ctx.session, 200)} into a summary${tokens}; they stay in the session, marked compacted`,
    );
    ctx.say(ctx.paint.dim(`  summary: ${oneLine(done.summary ?? '', 300)}`));
  } catch (err) {
    ctx.say(`/compact: ${oneLine((err as Error).message, 500)}`);
  }
}

async function sessionCommand(ctx: SlashContext, args: string[]): Promise<void> {
  const [sub, name] = args;
  if (sub === undefined) {
    ctx.say(
      ctx.session === null
        ? 'a new session (it gets its id with the first message)'
        : `session ${oneLine(ctx.session, 200)}`,
    );
    return;
  }
  if (sub === 'list') {
    const all = await ctx.rt.listSessions();
    if (all.length === 0) ctx.say('no sessions yet');
    for (const s of all.slice(0, 20)) {
      const mark = s.sessionId === ctx.session ? '*' : ' ';
      ctx.say(
        `${mark} ${oneLine(s.sessionId, 80)}  ${oneLine(s.agentId, 40)}  ${s.runs} runs  ${oneLine(s.title ?? '', 60)}`,
      );
    }
    return;
  }
  if (sub === 'new') {
    if (name === undefined) {
      ctx.session = null;
      ctx.say('a new session begins with the next message');
      return;
    }
    const created = await ctx.rt.createSession(ctx.agent, name);
    ctx.session = created.sessionId;
    ctx.say(`session ${oneLine(created.sessionId, 200)} (new)`);
    return;
  }
  if (sub === 'switch') {
    if (name === undefined) return ctx.say('/session switch NAME: which session? (/session list)');
    const found = await ctx.rt.getSession(name);
    if (found === null) return ctx.say(`no session ${JSON.stringify(oneLine(name, 200))} (/session list)`);
    ctx.session = found.sessionId;
    ctx.say(`session ${oneLine(found.sessionId, 200)} (${found.runs} runs)`);
    return;
  }
  ctx.say(`/session ${JSON.stringify(oneLine(sub, 40))}: use list, new [NAME] or switch NAME`);
}

async function inboxCommand(ctx: SlashContext, args: string[]): Promise<void> {
  const [sub, id, reason] = args;
  if (sub === undefined || sub === 'list') {
    const pending = await ctx.rt.pendingApprovals();
    if (pending.length === 0) ctx.say('the Inbox is empty');
    for (const a of pending)
      ctx.say(
        `  ${oneLine(a.id, 120)}  ${oneLine(a.tool, 60)} (${a.risk}, ${a.reason})  ${oneLine(a.target ?? '-', 120)}`,
      );
    return;
  }
  if (sub !== 'approve' && sub !== 'deny') {
    ctx.say(`/inbox ${JSON.stringify(oneLine(sub, 40))}: use list, approve ID or deny ID [REASON]`);
    return;
  }
  if (id === undefined) return ctx.say(`/inbox ${sub} ID: which approval? (/inbox list)`);
  const result = await ctx.rt.decideAsync(
    id,
    sub === 'approve' ? 'approved' : 'denied',
    ctx.user,
    reason === undefined ? undefined : reason.slice(0, 1000),
  );
  ctx.say(
    result.ok
      ? `${oneLine(id, 120)}: ${sub === 'approve' ? 'approved' : 'denied'} by ${oneLine(ctx.user, 80)}`
      : `${oneLine(id, 120)}: not recorded: ${oneLine(result.message, 400)}`,
  );
}
