import type { SessionEntry, SessionRecord } from '../../store/index.ts';
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

/** One session and its transcript (redacted), or null. */
export function showSession(
  stateDir: string,
  sessionId: string,
): { session: SessionRecord; messages: SessionEntry[] } | null {
  const store = openLocalStore(stateDir, true);
  try {
    const session = store.sessions.get(sessionId);
    if (session === null) return null;
    return { session, messages: store.sessions.entries(sessionId) };
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
