import type { Statement } from 'better-sqlite3';
import { assertWritable, fromStoredJson, toStoredJson, toStoredText, type StoreContext } from '../context.ts';
import { SessionCompactionStore } from './compactions.ts';
import type {
  AppendRunInput,
  ClaimSessionResult,
  SessionEntry,
  SessionMeta,
  SessionRecord,
} from './types.ts';

interface SessionRow {
  session_id: string;
  agent_id: string;
  workspace: string;
  surface: string;
  title: string | null;
  entries: number;
  runs: number;
  active_run_id: string | null;
  created_at: number;
  updated_at: number;
}

interface EntryRow {
  seq: number;
  run_id: string;
  entry: string;
}

/** The longest title kept (the first user message, shortened). */
const TITLE_CHARS = 80;

function toRecord(r: SessionRow): SessionRecord {
  return {
    sessionId: r.session_id,
    agentId: r.agent_id,
    workspace: r.workspace,
    surface: r.surface,
    title: r.title,
    entries: r.entries,
    runs: r.runs,
    activeRunId: r.active_run_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function prepare(ctx: StoreContext) {
  const db = ctx.db;
  return {
    get: db.prepare('SELECT * FROM sessions WHERE session_id = ?') as Statement<[string], SessionRow>,
    list: db.prepare('SELECT * FROM sessions ORDER BY updated_at DESC, session_id LIMIT ?') as Statement<
      [number],
      SessionRow
    >,
    latest: db.prepare(
      'SELECT * FROM sessions WHERE workspace = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1',
    ) as Statement<[string], SessionRow>,
    create: db.prepare(
      `INSERT INTO sessions (session_id, agent_id, workspace, surface, created_at, updated_at)
       VALUES (@sessionId, @agentId, @workspace, @surface, @now, @now) ON CONFLICT (session_id) DO NOTHING`,
    ),
    insert: db.prepare(
      `INSERT INTO sessions (session_id, agent_id, workspace, surface, title, active_run_id, created_at, updated_at)
       VALUES (@sessionId, @agentId, @workspace, @surface, @title, @runId, @now, @now)`,
    ),
    take: db.prepare(
      `UPDATE sessions SET active_run_id = ?, updated_at = ?, title = COALESCE(title, ?)
       WHERE session_id = ? AND active_run_id IS NULL`,
    ),
    setTitle: db.prepare('UPDATE sessions SET title = ? WHERE session_id = ?'),
    runTitles: db.prepare(
      `SELECT r.run_id, s.session_id, s.title FROM session_runs r JOIN sessions s ON s.session_id = r.session_id
       UNION ALL SELECT active_run_id, session_id, title FROM sessions WHERE active_run_id IS NOT NULL`,
    ) as Statement<[], { run_id: string; session_id: string; title: string | null }>,
    release: db.prepare(
      'UPDATE sessions SET active_run_id = NULL WHERE session_id = ? AND active_run_id = ?',
    ),
    entries: db.prepare(
      'SELECT seq, run_id, entry FROM session_entries WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq',
    ) as Statement<[string, number, number], EntryRow>,
    appended: db.prepare('SELECT 1 FROM session_runs WHERE run_id = ?').pluck() as Statement<
      [string],
      number
    >,
    runIds: db
      .prepare('SELECT run_id FROM session_runs WHERE session_id = ? ORDER BY first_seq, run_id')
      .pluck() as Statement<[string], string>,
    addEntry: db.prepare('INSERT INTO session_entries (session_id, seq, run_id, entry) VALUES (?, ?, ?, ?)'),
    addRun: db.prepare(
      'INSERT INTO session_runs (run_id, session_id, first_seq, count, status, appended_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    grow: db.prepare(
      `UPDATE sessions SET entries = entries + ?, runs = runs + 1, updated_at = ?,
         title = COALESCE(title, ?),
         active_run_id = CASE WHEN active_run_id = ? THEN NULL ELSE active_run_id END
       WHERE session_id = ?`,
    ),
    removeSession: db.prepare('DELETE FROM sessions WHERE session_id = ?'),
    removeEntries: db.prepare('DELETE FROM session_entries WHERE session_id = ?'),
    removeRuns: db.prepare('DELETE FROM session_runs WHERE session_id = ?'),
  };
}

/**
 * Durable conversations (schema version 13): each session's transcript as the model saw it,
 * redacted, appended once per run, and which run holds the session now (one at a time). On a
 * file older than version 13 (read-only opens) reads return nothing.
 */
export class SessionStore {
  readonly #s: ReturnType<typeof prepare> | null;
  /** Which of each session's entries are compacted, and the summary shown in their place. */
  readonly compactions: SessionCompactionStore;

  constructor(private readonly ctx: StoreContext) {
    this.compactions = new SessionCompactionStore(ctx);
    const present =
      (ctx.db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'sessions'").pluck().get() as number) >
      0;
    this.#s = present ? prepare(ctx) : null;
  }

  /** One session, or null. */
  get(sessionId: string): SessionRecord | null {
    const row = this.#s?.get.get(sessionId);
    return row === undefined ? null : toRecord(row);
  }

  /** The most recently used sessions first (at most `limit`). */
  list(limit = 1000): SessionRecord[] {
    return (this.#s?.list.all(limit) ?? []).map(toRecord);
  }

  /** The most recently used session of a workspace, or null. */
  latest(workspace: string): SessionRecord | null {
    const row = this.#s?.latest.get(workspace);
    return row === undefined ? null : toRecord(row);
  }

  /**
   * Makes `runId` the session's one active run: creates the session when it is new, takes it
   * when no run holds it, and answers ok again for the run that holds it (idempotent). Refused
   * (with the holder) when another run holds it. `stale(holder)` is asked about the holder first:
   * true releases it (a run that never started, or that ended and was appended).
   */
  claim(
    sessionId: string,
    runId: string,
    meta: SessionMeta,
    stale: (activeRunId: string) => boolean = () => false,
  ): ClaimSessionResult {
    const s = this.#writable('claim');
    return this.ctx.tx.run(() => {
      const now = this.ctx.clock();
      const row = s.get.get(sessionId);
      const title = titleOfText(this.ctx, meta.firstMessage);
      if (row === undefined) {
        s.insert.run({
          sessionId,
          runId,
          now,
          agentId: meta.agentId,
          workspace: meta.workspace,
          surface: meta.surface,
          title,
        });
        return { ok: true, entries: 0, created: true };
      }
      if (row.active_run_id === runId) return { ok: true, entries: row.entries, created: false };
      if (row.active_run_id !== null) {
        if (!stale(row.active_run_id))
          return { ok: false, activeRunId: row.active_run_id, agentId: row.agent_id };
        s.release.run(sessionId, row.active_run_id);
      }
      s.take.run(runId, now, title, sessionId);
      return { ok: true, entries: s.get.get(sessionId)?.entries ?? row.entries, created: false };
    });
  }

  /** Creates an empty session that no run holds; false (nothing changed) when the id is taken. */
  create(sessionId: string, meta: SessionMeta): boolean {
    const s = this.#writable('create');
    return (
      s.create.run({
        sessionId,
        now: this.ctx.clock(),
        agentId: meta.agentId,
        workspace: meta.workspace,
        surface: meta.surface,
      }).changes > 0
    );
  }

  /** Sets a session's title (a human's edit; redacted like every stored text). False when there is no such session. */
  setTitle(sessionId: string, title: string): boolean {
    return this.#writable('setTitle').setTitle.run(toStoredText(this.ctx, title), sessionId).changes > 0;
  }

  /** Each run that holds or held a session: its session and that session's title now. */
  runTitles(): Map<string, { sessionId: string; title: string | null }> {
    const out = new Map<string, { sessionId: string; title: string | null }>();
    for (const r of this.#s?.runTitles.all() ?? [])
      out.set(r.run_id, { sessionId: r.session_id, title: r.title });
    return out;
  }

  /** Lets go of a session held by `runId` (its run was never started); nothing when another holds it. */
  release(sessionId: string, runId: string): void {
    this.#writable('release').release.run(sessionId, runId);
  }

  /** Whether a run's entries were appended already. */
  hasRun(runId: string): boolean {
    return this.#s?.appended.get(runId) !== undefined;
  }

  /**
   * Appends a run's transcript entries to its session, and releases the session when the run
   * held it, in one transaction, at most once per run: false (nothing written) when this
   * run was appended before or its session is gone.
   */
  appendRun(input: AppendRunInput): boolean {
    const s = this.#writable('appendRun');
    return this.ctx.tx.run(
      () => {
        if (s.appended.get(input.runId) !== undefined) return false;
        const row = s.get.get(input.sessionId);
        if (row === undefined) return false;
        const now = this.ctx.clock();
        let seq = row.entries;
        for (const e of input.entries)
          s.addEntry.run(input.sessionId, seq++, input.runId, toStoredJson(this.ctx, e));
        s.addRun.run(input.runId, input.sessionId, row.entries, input.entries.length, input.status, now);
        s.grow.run(input.entries.length, now, titleOf(this.ctx, input.entries), input.runId, input.sessionId);
        return true;
      },
      // As durable as the run's last snapshot (it may be called inside the transaction that
      // writes it); a crash that loses it is repaired from that snapshot (see runtime/sessions).
    );
  }

  /** A session's entries with `from <= seq < upTo` (all of them by default), in order. */
  entries(sessionId: string, upTo = Number.MAX_SAFE_INTEGER, from = 0): SessionEntry[] {
    return (this.#s?.entries.all(sessionId, from, upTo) ?? []).map((r) => ({
      seq: r.seq,
      runId: r.run_id,
      entry: fromStoredJson(this.ctx, r.entry, `session_entries(${sessionId}, ${r.seq}).entry`),
    }));
  }

  /** The runs that appended to a session, in order (its usage is theirs, summed). */
  runIds(sessionId: string): string[] {
    return this.#s?.runIds.all(sessionId) ?? [];
  }

  /** Removes a session and its transcript. False when there was none. */
  remove(sessionId: string): boolean {
    const s = this.#writable('remove');
    return this.ctx.tx.run(
      () => {
        s.removeEntries.run(sessionId);
        s.removeRuns.run(sessionId);
        this.compactions.removeAll(sessionId);
        return s.removeSession.run(sessionId).changes > 0;
      },
      { durable: true },
    );
  }

  #writable(operation: string): ReturnType<typeof prepare> {
    assertWritable(this.ctx, `sessions.${operation}`);
    if (this.#s === null) throw new Error(`sessions.${operation}: the database has no sessions table`);
    return this.#s;
  }
}

/** The title of a session: its first user message, on one line, shortened and redacted. */
function titleOf(ctx: StoreContext, entries: readonly unknown[]): string | null {
  const first = entries.find((e) => (e as { role?: unknown } | null)?.role === 'user') as
    { text?: unknown } | undefined;
  return titleOfText(ctx, first?.text);
}

/** A message as a title: on one line, shortened and redacted; null for none or an empty one. */
function titleOfText(ctx: StoreContext, text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return null;
  return toStoredText(ctx, line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line);
}
