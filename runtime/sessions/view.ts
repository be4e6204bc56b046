import type { SessionRecord } from '../../store/index.ts';
import { checkSessionName, SessionNameError } from './errors.ts';
import type { CompactOptions, CompactResult, Compactor } from './compact.ts';
import type { Sessions } from './sessions.ts';

/** A session as surfaces show it (redacted title; no transcript). */
export type SessionView = SessionRecord;

/** One entry of a session's transcript as surfaces show it (redacted). */
export interface SessionMessage {
  readonly seq: number;
  readonly runId: string;
  readonly entry: unknown;
  /** Whether it is compacted: the model is shown its compaction's summary in its place. */
  readonly compacted: boolean;
}

/** What surfaces may do with sessions (`runtime.sessions`). */
export interface SessionsView {
  /** Every session, most recently used first. */
  list(): SessionView[];
  /** One session, or null. */
  get(sessionId: string): SessionView | null;
  /** The most recently used session of this workspace, or null (`snotra run --continue`). */
  latest(): SessionView | null;
  /** A session's transcript (redacted); throws `SessionNotFoundError`. */
  messages(sessionId: string): SessionMessage[];
  /**
   * Creates an empty session for an agent (a named one, or a new id); throws `SessionNameError`
   * for a bad or taken name.
   */
  create(agentId: string, surface: string, name?: string): SessionView;
  /**
   * Sets a session's title (a human's edit, on one line, redacted when stored); throws
   * `SessionNotFoundError`. Later runs never replace it.
   */
  rename(sessionId: string, title: string): SessionView;
  /** Removes a session; throws `SessionNotFoundError`, or `SessionBusyError` while a run holds it. */
  remove(sessionId: string): void;
  /**
   * Summarizes the session's older entries with its agent's model into one summary the model is
   * shown in their place (`/compact`); the entries stay, marked compacted. Throws
   * `SessionNotFoundError`, `SessionBusyError` while a run holds it, or `CompactionError`.
   */
  compact(sessionId: string, options?: CompactOptions): Promise<CompactResult>;
}

/** The surfaces' view of the runtime's sessions. */
export function sessionsView(sessions: Sessions, compactor: Compactor): SessionsView {
  return {
    list: () => sessions.list(),
    get: (id) => sessions.get(id),
    latest: () => sessions.latest(),
    messages: (id) => sessions.messages(id),
    create: (agentId, surface, name) => {
      const id = name === undefined ? sessions.newId('chat') : checkSessionName(name, 'session name');
      if (!sessions.create(id, agentId, surface))
        throw new SessionNameError(`session ${JSON.stringify(id)} already exists`);
      return sessions.get(id) as SessionView;
    },
    rename: (id, title) => {
      sessions.rename(id, title.replace(/\s+/g, ' ').trim());
      return sessions.get(id) as SessionView;
    },
    remove: (id) => sessions.remove(id),
    compact: (id, options) => compactor.compact(id, options),
  };
}
