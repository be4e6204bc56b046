import type { SessionEntry } from '../../store/index.ts';

/** The system prompt of a summarizing model call. */
export const COMPACT_SYSTEM =
  'You summarize a conversation between a user and an agent of Snotra Runtime so that the agent can go on from the summary alone. You have no tools.';

/** The request that follows the entries to summarize. */
export const COMPACT_INSTRUCTION = [
  'Summarize the conversation above for yourself, to go on with it later without it.',
  'Keep: what the user asked and decided, facts found (file paths, names, numbers, commands and their results), what was done and changed, and what is still open.',
  'Leave out pleasantries and tool output that no longer matters. Write plain text, at most about 400 words.',
].join('\n');

/**
 * Where a compaction ends: the seq before which a session's entries get summarized, given its
 * entries since the previous compaction (`from`, in order) and how many of the latest exchanges
 * stay as they are (an exchange begins at a user entry, so a call and its result are never
 * split; entries before the first user entry go with the summarized part). `from` when there is
 * nothing to summarize. Pure.
 */
export function compactionCut(stored: readonly SessionEntry[], keep: number, from: number): number {
  const last = stored.at(-1);
  if (last === undefined) return from;
  if (keep <= 0) return last.seq + 1;
  const starts = stored.flatMap((e) =>
    (e.entry as { role?: unknown } | null)?.role === 'user' ? [e.seq] : [],
  );
  if (starts.length < keep) return from;
  return Math.max(from, starts[starts.length - keep] as number);
}
