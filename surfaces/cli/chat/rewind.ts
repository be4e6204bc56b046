import { isCheckpointId, type CheckpointSummary, type RewindOutcome } from '../../../runtime/index.ts';
import type { ChatRuntime } from '../../client/chat.ts';
import { oneLine } from '../run/escape.ts';
import type { Paint } from '../run/paint.ts';
import { changeLine, effectLine } from '../rewind.ts';

/** What `/rewind` reads of the chat (the slash commands' context has it). */
export interface RewindSlashContext {
  readonly rt: ChatRuntime;
  readonly user: string;
  readonly paint: Paint;
  readonly session: string | null;
  say(text: string): void;
}

const MAX_SHOWN = 20;
const CONFIRM = 'confirm';

const time = (at: number): string => new Date(at).toISOString().slice(11, 19);

function listLine(c: CheckpointSummary): string {
  const call = c.tool === 'rewind' ? 'before a rewind' : `call ${c.callId ?? '-'}`;
  return oneLine(
    `  ${c.id}  ${time(c.at)}  ${c.tool}  ${call}  changed since: ${c.changedSince.length}`,
    400,
  );
}

function report(ctx: RewindSlashContext, r: RewindOutcome): void {
  const head = r.dryRun ? `rewind to ${r.checkpoint.id} would change` : `rewound to ${r.checkpoint.id}`;
  ctx.say(`${oneLine(head, 300)} (${r.changes.length} path${r.changes.length === 1 ? '' : 's'}):`);
  for (const c of r.changes.slice(0, MAX_SHOWN)) ctx.say(changeLine(c));
  if (r.changes.length > MAX_SHOWN) ctx.say(`  … ${r.changes.length - MAX_SHOWN} more`);
  for (const p of r.patches.slice(0, 5))
    for (const line of p.diff.split('\n').slice(0, 60)) ctx.say(oneLine(line, 400));
  if (r.notRewindable.length > 0) {
    ctx.say(ctx.paint.yellow('not rewindable (their effects left the machine; compensate by hand):'));
    for (const e of r.notRewindable) ctx.say(effectLine(e));
  }
}

/**
 * `/rewind` in the chat: the checkpoints of this chat's session (one before each call that could
 * change a root); `/rewind ID` shows the diff a rewind to one would make and changes nothing;
 * `/rewind ID confirm` restores the roots (audited `rewind` through the chat, undoable; refused
 * while a run of this runtime can write them).
 */
export async function rewindSlash(ctx: RewindSlashContext, args: readonly string[]): Promise<void> {
  const [id, word] = args;
  if (ctx.session === null) return ctx.say('no checkpoints: this session has no call yet');
  const mine = await ctx.rt.checkpoints(ctx.session);
  if (id === undefined) {
    if (mine.length === 0) return ctx.say('no checkpoints in this session yet');
    for (const c of mine) ctx.say(listLine(c));
    return ctx.say(ctx.paint.dim('/rewind ID shows the diff; /rewind ID confirm puts the files back'));
  }
  if (!isCheckpointId(id) || !mine.some((c) => c.id === id))
    return ctx.say(
      `/rewind: no checkpoint ${JSON.stringify(oneLine(id, 80))} in this session (/rewind lists them)`,
    );
  if (word !== undefined && word !== CONFIRM)
    return ctx.say(`/rewind ID ${CONFIRM}: ${JSON.stringify(oneLine(word, 40))} is not "${CONFIRM}"`);
  const dryRun = word !== CONFIRM;
  let outcome: RewindOutcome;
  try {
    outcome = await ctx.rt.rewind(id, dryRun, ctx.user);
  } catch (err) {
    return ctx.say(ctx.paint.red(`/rewind: ${oneLine((err as Error).message, 1000)}`));
  }
  report(ctx, outcome);
  if (dryRun) return ctx.say(`to put the files back: /rewind ${id} ${CONFIRM}`);
  if (outcome.undo !== null) ctx.say(`undo this rewind with: /rewind ${outcome.undo} ${CONFIRM}`);
}
