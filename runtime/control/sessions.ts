import type { ModelUsage } from '../../machines/run/types.ts';
import type { SessionCompaction, SessionEntry, SessionRecord } from '../../store/index.ts';
import { storedContext } from '../runs/stored-run.ts';
import { sessionUsage } from '../sessions/usage.ts';
import { SessionBusyError, SessionNotFoundError } from '../sessions/errors.ts';
import { openLocalStore, runtimePid } from './local-store.ts';

const ENDED = new Set(['completed', 'failed', 'denied']);

/** Sessions of a state dir, most recently used first. */
export function listSessions(stateDir: string): SessionRecord[] {
  const store = openLocalStore(stateDir, true);
  try {
    return store.sessions.list();
  } finally {
    store.close();
  }
}

/**
 * One session, its transcript (redacted; each entry marked when it is compacted), its latest
 * compaction (the summary the model is shown in place of the compacted entries; null when none)
 * and its usage (the tokens and cost of its runs, summed; null when none reported any), or null.
 */
export function showSession(
  stateDir: string,
  sessionId: string,
): {
  session: SessionRecord;
  messages: (SessionEntry & { compacted: boolean })[];
  compaction: SessionCompaction | null;
  usage: ModelUsage | null;
} | null {
  const store = openLocalStore(stateDir, true);
  try {
    const session = store.sessions.get(sessionId);
    if (session === null) return null;
    const usage = sessionUsage(
      store.sessions.runIds(sessionId),
      (runId) => storedContext(store.snapshots.get(runId)),
      store.sessions.compactions.usage(sessionId),
    );
    const compaction = store.sessions.compactions.latest(sessionId);
    const through = compaction?.throughSeq ?? 0;
    const messages = store.sessions.entries(sessionId).map((e) => ({ ...e, compacted: e.seq < through }));
    return { session, messages, compaction, usage };
  } finally {
    store.close();
  }
}

/**
 * Removes a session and its transcript, as the local user. Throws `SessionNotFoundError`, or
 * `SessionBusyError` while a run holds it (a run that has not ended, or one that is starting in
 * a runtime running on this state dir).
 */
export function removeSession(stateDir: string, sessionId: string): void {
  const store = openLocalStore(stateDir, false);
  try {
    const session = store.sessions.get(sessionId);
    if (session === null) throw new SessionNotFoundError(sessionId);
    const holder = session.activeRunId;
    if (holder !== null) {
      const status = store.snapshots.statusOf(holder);
      const busy = status === null ? runtimePid(stateDir) !== null : !ENDED.has(status);
      if (busy) throw new SessionBusyError(sessionId, holder, status ?? 'starting');
    }
    store.sessions.remove(sessionId);
  } finally {
    store.close();
  }
}
