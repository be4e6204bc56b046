import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { makeSessionId } from '../../machines/run/run-id.ts';
import type { ModelUsage, RunContext, TranscriptEntry } from '../../machines/run/types.ts';
import type { SessionRecord, Store } from '../../store/index.ts';
import type { RunHost } from '../runs/run-host.ts';
import { storedContext } from '../runs/stored-run.ts';
import { SessionBusyError, SessionNotFoundError } from './errors.ts';
import { summaryEntry, toHistory } from './history.ts';
import { sessionUsage } from './usage.ts';

/** Who starts a run in a session, and its message (the title of a session that has none yet). */
export interface RunMeta {
  readonly agentId: string;
  readonly surface: string;
  readonly firstMessage?: string;
}

/** What the sessions need from the runtime. */
export interface SessionsDeps {
  readonly store: Store;
  readonly runs: RunHost;
  /** The primary root's path now: the workspace a new session belongs to. */
  readonly workspace: () => string;
  readonly logger: Logger;
  /**
   * Asked before a surface's message goes to a session (the automatic compaction); never throws.
   * Called through `beforeMessage`, so it may be given after the sessions are made.
   */
  beforeMessage?: (sessionId: string, agentId: string, text: string) => Promise<void>;
}

const TERMINAL = new Set(['completed', 'failed', 'denied']);

/** How many fitted histories are kept decoded (one per live conversation is enough). */
const HISTORY_CACHE = 32;

/**
 * Durable conversations (README "Sessions"). A run that belongs to a session starts with the
 * session's transcript before its own (`historyUpTo`, fixed at its start) and, when it ends
 * (any outcome), appends what it added, once: the store refuses a second append of one run, so a
 * run resumed after a restart appends nothing twice, and a run whose end was recorded but not
 * its append (a crash in between) is appended from its stored snapshot at the next boot.
 *
 * One run holds a session at a time. An in-process surface reserves the session before its
 * message is sent (`reserve`): a second message while a run holds it is refused with
 * `SessionBusyError` (a run parked on an approval holds its session until it ends). A message
 * that reaches an agent by the bus alone (a platform chat, another node) is never refused: it
 * starts with the history as it is then, and its part is appended when it ends.
 */
export class Sessions {
  /** Runs reserved by this process whose run has not started yet. */
  readonly #reserved = new Set<string>();
  readonly #history = new Map<string, TranscriptEntry[]>();

  constructor(private readonly deps: SessionsDeps) {}

  /** A new session id for a surface that starts a conversation without naming one. */
  newId(kind: 'cli' | 'chat'): string {
    return makeSessionId(kind, randomUUID());
  }

  /**
   * Makes `runId` the session's holder before its message is sent (creating the session when it
   * is new). Throws `SessionBusyError` when another run holds it.
   */
  reserve(sessionId: string, runId: string, meta: RunMeta): void {
    const claimed = this.#claim(sessionId, runId, meta);
    if (!claimed.ok) {
      const holder = claimed.activeRunId ?? 'unknown';
      throw new SessionBusyError(sessionId, holder, this.#statusOf(holder));
    }
    this.#reserved.add(runId);
  }

  /** What happens before a surface's message goes to a session (see `SessionsDeps.beforeMessage`). */
  async beforeMessage(sessionId: string, agentId: string, text: string): Promise<void> {
    await this.deps.beforeMessage?.(sessionId, agentId, text);
  }

  /** Gives back a reservation whose message could not be sent. */
  unreserve(sessionId: string, runId: string): void {
    this.#reserved.delete(runId);
    this.deps.store.sessions.release(sessionId, runId);
  }

  /**
   * The number of session entries a new run starts after (its `historyUpTo`): the run takes the
   * session when no run holds it; otherwise it shares the history as it is now.
   */
  startRun(sessionId: string, runId: string, meta: RunMeta): number {
    this.#reserved.delete(runId);
    const claimed = this.#claim(sessionId, runId, meta);
    if (claimed.ok) return claimed.entries;
    return this.deps.store.sessions.get(sessionId)?.entries ?? 0;
  }

  /** A run ended: what it added is appended to its session, once. */
  runEnded(ctx: RunContext): void {
    if (ctx.parentRunId !== null || ctx.historyUpTo === undefined) return;
    const status = ctx.outcome?.status ?? 'failed';
    try {
      this.deps.store.sessions.appendRun({
        sessionId: ctx.sessionId,
        runId: ctx.runId,
        status,
        entries: ctx.transcript,
      });
    } catch (err) {
      // Left for the next boot's repair (the run's terminal snapshot holds its transcript).
      this.deps.logger.error(
        { runId: ctx.runId, sessionId: ctx.sessionId, err: (err as Error).message },
        'session: the run could not be appended',
      );
    }
  }

  /**
   * At boot: every session held by a run that ended without its append (a crash in between)
   * gets it from the run's stored snapshot. Returns how many were appended.
   */
  repair(): number {
    let n = 0;
    for (const s of this.deps.store.sessions.list()) {
      if (s.activeRunId !== null && this.#appendIfEnded(s.activeRunId)) n++;
    }
    return n;
  }

  /**
   * The session's transcript before entry `upTo`, as the model is shown it (history call ids):
   * compacted entries are replaced by their summary (`summaryEntry`).
   */
  history(sessionId: string, upTo: number): TranscriptEntry[] {
    const key = `${upTo}\u0000${sessionId}`;
    const hit = this.#history.get(key);
    if (hit !== undefined) return hit;
    const { store } = this.deps;
    const compaction = store.sessions.compactions.latest(sessionId, upTo);
    const from = compaction?.throughSeq ?? 0;
    const rest = toHistory(sessionId, store.sessions.entries(sessionId, upTo, from));
    const history = compaction === null ? rest : [summaryEntry(compaction), ...rest];
    if (this.#history.size >= HISTORY_CACHE)
      this.#history.delete(this.#history.keys().next().value as string);
    this.#history.set(key, history);
    return history;
  }

  /** The run holding a session now (one that has not ended), or null; throws `SessionNotFoundError`. */
  holder(sessionId: string): string | null {
    const s = this.get(sessionId);
    if (s === null) throw new SessionNotFoundError(sessionId);
    return s.activeRunId !== null && !this.#stale(s.activeRunId) ? s.activeRunId : null;
  }

  /** Throws `SessionBusyError` while a run holds the session (or `SessionNotFoundError`). */
  assertIdle(sessionId: string): void {
    const holder = this.holder(sessionId);
    if (holder !== null) throw new SessionBusyError(sessionId, holder, this.#statusOf(holder));
  }

  /** Forgets a session's decoded histories (after it was compacted). */
  forget(sessionId: string): void {
    for (const key of [...this.#history.keys()])
      if (key.endsWith(`\u0000${sessionId}`)) this.#history.delete(key);
  }

  /**
   * The tokens and cost of a session so far: its runs' and its compactions', summed (null when
   * none reported any).
   */
  usage(sessionId: string): ModelUsage | null {
    const { store } = this.deps;
    return sessionUsage(
      store.sessions.runIds(sessionId),
      (runId) => storedContext(store.snapshots.get(runId)),
      store.sessions.compactions.usage(sessionId),
    );
  }

  /** Creates an empty session; false when the id is taken. */
  create(sessionId: string, agentId: string, surface: string): boolean {
    return this.deps.store.sessions.create(sessionId, { agentId, surface, workspace: this.deps.workspace() });
  }

  /** Every session, most recently used first. */
  list(): SessionRecord[] {
    return this.deps.store.sessions.list();
  }

  /** One session, or null. */
  get(sessionId: string): SessionRecord | null {
    return this.deps.store.sessions.get(sessionId);
  }

  /** The most recently used session of this workspace (`snotra run --continue`), or null. */
  latest(): SessionRecord | null {
    return this.deps.store.sessions.latest(this.deps.workspace());
  }

  /**
   * A session's transcript (redacted), in order, each entry marked when it is compacted (shown to
   * the model as its compaction's summary); throws `SessionNotFoundError`.
   */
  messages(sessionId: string): { seq: number; runId: string; entry: unknown; compacted: boolean }[] {
    if (this.get(sessionId) === null) throw new SessionNotFoundError(sessionId);
    const through = this.deps.store.sessions.compactions.latest(sessionId)?.throughSeq ?? 0;
    return this.deps.store.sessions.entries(sessionId).map((e) => ({ ...e, compacted: e.seq < through }));
  }

  /** Sets a session's title (a human's edit); throws `SessionNotFoundError`. */
  rename(sessionId: string, title: string): void {
    if (!this.deps.store.sessions.setTitle(sessionId, title)) throw new SessionNotFoundError(sessionId);
  }

  /** Each run that holds or held a session: its session and that session's title. */
  runTitles(): Map<string, { sessionId: string; title: string | null }> {
    return this.deps.store.sessions.runTitles();
  }

  /** Removes a session; throws `SessionNotFoundError`, or `SessionBusyError` while a run holds it. */
  remove(sessionId: string): void {
    this.assertIdle(sessionId);
    this.deps.store.sessions.remove(sessionId);
    this.forget(sessionId);
  }

  #claim(sessionId: string, runId: string, meta: RunMeta) {
    return this.deps.store.sessions.claim(
      sessionId,
      runId,
      { ...meta, workspace: this.deps.workspace() },
      (holder) => this.#stale(holder),
    );
  }

  /** Whether the run holding a session no longer does: it never started, or it ended (appended now). */
  #stale(holder: string): boolean {
    const { runs, store } = this.deps;
    if (this.#reserved.has(holder) || runs.isLive(holder)) return false;
    const status = store.snapshots.statusOf(holder);
    if (status === null) return true;
    if (!TERMINAL.has(status)) return false;
    this.#appendIfEnded(holder);
    return true;
  }

  /** Appends an ended run from its stored snapshot when it was not appended; true when it was now. */
  #appendIfEnded(runId: string): boolean {
    const { store } = this.deps;
    const status = store.snapshots.statusOf(runId);
    if (status === null || !TERMINAL.has(status) || store.sessions.hasRun(runId)) return false;
    const ctx = storedContext(store.snapshots.get(runId));
    if (ctx === null || ctx.historyUpTo === undefined) return false;
    return store.sessions.appendRun({
      sessionId: ctx.sessionId,
      runId,
      status,
      entries: ctx.transcript,
    });
  }

  /** The holder's status as stored (a wait for a human is written at once), else running or starting. */
  #statusOf(runId: string): string {
    return (
      this.deps.store.snapshots.statusOf(runId) ?? (this.deps.runs.isLive(runId) ? 'running' : 'starting')
    );
  }
}
