import type { Statement } from 'better-sqlite3';
import { assertWritable, toStoredText, type StoreContext } from '../context.ts';

/** A session's compaction: its entries before `throughSeq` are shown to the model as `summary`. */
export interface SessionCompaction {
  readonly sessionId: string;
  /** Entries with `seq < throughSeq` are compacted (kept in the store, not sent). */
  readonly throughSeq: number;
  /** The model's summary of them (with any earlier summary), redacted. */
  readonly summary: string;
  /** How many entries this compaction summarized (those since the previous one). */
  readonly summarized: number;
  readonly createdAt: number;
}

interface Row {
  session_id: string;
  through_seq: number;
  summary: string;
  summarized: number;
  created_at: number;
}

function prepare(ctx: StoreContext) {
  const db = ctx.db;
  return {
    latest: db.prepare(
      `SELECT * FROM session_compactions WHERE session_id = ? AND through_seq <= ?
       ORDER BY through_seq DESC LIMIT 1`,
    ) as Statement<[string, number], Row>,
    add: db.prepare(
      `INSERT INTO session_compactions (session_id, through_seq, summary, summarized, created_at)
       SELECT @sessionId, @throughSeq, @summary, @summarized, @now FROM sessions
       WHERE session_id = @sessionId AND entries >= @throughSeq
       ON CONFLICT (session_id, through_seq) DO NOTHING`,
    ),
    remove: db.prepare('DELETE FROM session_compactions WHERE session_id = ?'),
  };
}

const toCompaction = (r: Row): SessionCompaction => ({
  sessionId: r.session_id,
  throughSeq: r.through_seq,
  summary: r.summary,
  summarized: r.summarized,
  createdAt: r.created_at,
});

/**
 * Sessions' compactions (schema version 16). A file older than version 16 (read-only opens)
 * has none.
 */
export class SessionCompactionStore {
  readonly #s: ReturnType<typeof prepare> | null;

  constructor(private readonly ctx: StoreContext) {
    const present =
      (ctx.db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'session_compactions'")
        .pluck()
        .get() as number) > 0;
    this.#s = present ? prepare(ctx) : null;
  }

  /** The latest compaction of a session that a history of `upTo` entries reaches, or null. */
  latest(sessionId: string, upTo = Number.MAX_SAFE_INTEGER): SessionCompaction | null {
    const row = this.#s?.latest.get(sessionId, upTo);
    return row === undefined ? null : toCompaction(row);
  }

  /**
   * Records a compaction (its summary redacted). False (nothing written) when the session is
   * gone, holds fewer than `throughSeq` entries, or has a compaction through that entry already.
   */
  add(sessionId: string, throughSeq: number, summary: string, summarized: number): boolean {
    const s = this.#writable('add');
    return (
      s.add.run({
        sessionId,
        throughSeq,
        summary: toStoredText(this.ctx, summary) ?? '',
        summarized,
        now: this.ctx.clock(),
      }).changes > 0
    );
  }

  /** Removes a session's compactions (inside the removal of the session). */
  removeAll(sessionId: string): void {
    this.#s?.remove.run(sessionId);
  }

  #writable(operation: string): ReturnType<typeof prepare> {
    assertWritable(this.ctx, `sessionCompactions.${operation}`);
    if (this.#s === null)
      throw new Error(`sessionCompactions.${operation}: the database has no session_compactions table`);
    return this.#s;
  }
}
