import { z } from 'zod';
import type { TranscriptEntry } from '../../machines/run/types.ts';
import type { SessionCompaction, SessionEntry } from '../../store/index.ts';

const Call = z.looseObject({ id: z.string(), tool: z.string(), args: z.unknown() });
const Entry = z.union([
  z.looseObject({ role: z.literal('user'), text: z.string() }),
  z.looseObject({
    role: z.literal('assistant'),
    text: z.string().optional(),
    calls: z.array(Call).optional(),
  }),
  z.looseObject({
    role: z.literal('observation'),
    observation: z.looseObject({ kind: z.string(), callId: z.string(), tool: z.string() }),
  }),
]);

/** A stored session entry that is not a transcript entry (a corrupt or foreign row). */
export class SessionEntryError extends Error {
  readonly code = 'session_entry_invalid';
}

/**
 * The id a history call gets when it is sent again: `h` and eight base-36 digits, numbered in
 * order through the whole history. Call ids restart at every run (`c00000000` …), and APIs refuse
 * two tool calls with one id in a conversation; nine letters and digits suit every API.
 */
export function historyCallId(n: number): string {
  return `h${n.toString(36).padStart(8, '0')}`;
}

/**
 * A session's stored entries as the transcript the model is shown before a run's own: each run's
 * call ids renamed to history ids (its results follow), checked entry by entry. Pure.
 */
export function toHistory(sessionId: string, stored: readonly SessionEntry[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let n = 0;
  let run: string | null = null;
  let ids = new Map<string, string>();
  for (const s of stored) {
    const parsed = Entry.safeParse(s.entry);
    if (!parsed.success)
      throw new SessionEntryError(
        `session ${JSON.stringify(sessionId)}: stored entry ${s.seq} (of run ${s.runId}) is not a transcript entry`,
      );
    if (s.runId !== run) {
      run = s.runId;
      ids = new Map();
    }
    const e = parsed.data as TranscriptEntry;
    if (e.role === 'assistant' && e.calls !== undefined && e.calls.length > 0) {
      const calls = e.calls.map((c) => {
        const id = historyCallId(n++);
        ids.set(c.id, id);
        return { id, tool: c.tool, args: c.args };
      });
      out.push(
        e.text === undefined ? { role: 'assistant', calls } : { role: 'assistant', text: e.text, calls },
      );
    } else if (e.role === 'observation') {
      const callId = ids.get(e.observation.callId) ?? historyCallId(n++);
      out.push({ role: 'observation', observation: { ...e.observation, callId } });
    } else out.push(e);
  }
  return out;
}

/** The first line of the entry a compaction's summary is shown as (`summaryEntry`). */
export const SUMMARY_HEADING = '[Summary of the earlier part of this conversation, compacted]';

/** The user entry the model is shown in place of a session's compacted entries. Pure. */
export function summaryEntry(c: Pick<SessionCompaction, 'summary'>): TranscriptEntry {
  return { role: 'user', text: `${SUMMARY_HEADING}\n${c.summary}` };
}
