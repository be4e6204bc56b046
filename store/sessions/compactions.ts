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

/** The tokens (and cost, when priced) of one model call or of several summed. */
export interface CompactionUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly costUsd?: number;
}

interface Row {
  session_id: string;
  through_seq: number;
  summary: string;
  summarized: number;
  created_at: number;
}

type UsageRow = {
  n: number;
  input: number | null;
  output: number | null;
  priced: number;
  cost: number | null;
};

/** Why a compaction's model call left no compaction (its usage is kept all the same). */
export type UnkeptReason = 'empty_summary' | 'not_kept';

/**
 * The statements; `withUsage`: the file has the usage columns (version 18); `withUnkept`: the
 * table of calls that left no compaction (version 20).
 */
function prepare(ctx: StoreContext, withUsage: boolean, withUnkept: boolean) {
  const db = ctx.db;
  const columns = withUsage ? ', input_tokens, output_tokens, cost_usd' : '';
  const values = withUsage ? ', @inputTokens, @outputTokens, @costUsd' : '';
  return {
    latest: db.prepare(
      `SELECT * FROM session_compactions WHERE session_id = ? AND through_seq <= ?
       ORDER BY through_seq DESC LIMIT 1`,
    ) as Statement<[string, number], Row>,
    add: db.prepare(
      `INSERT INTO session_compactions (session_id, through_seq, summary, summarized, created_at${columns})
       SELECT @sessionId, @throughSeq, @summary, @summarized, @now${values} FROM sessions
       WHERE session_id = @sessionId AND entries >= @throughSeq
       ON CONFLICT (session_id, through_seq) DO NOTHING`,
    ),
    remove: db.prepare('DELETE FROM session_compactions WHERE session_id = ?'),
    usage: !withUsage
      ? null
      : (db.prepare(
          `SELECT count(input_tokens) AS n, sum(input_tokens) AS input, sum(output_tokens) AS output,
         count(cost_usd) AS priced, sum(cost_usd) AS cost
       FROM session_compactions WHERE session_id = ?`,
        ) as Statement<[string], UsageRow>),
    unkept: !withUnkept
      ? null
      : {
          add: db.prepare(
            `INSERT INTO session_compaction_unkept
               (session_id, through_seq, reason, input_tokens, output_tokens, cost_usd, created_at)
             SELECT @sessionId, @throughSeq, @reason, @inputTokens, @outputTokens, @costUsd, @now
             FROM sessions WHERE session_id = @sessionId`,
          ),
          usage: db.prepare(
            `SELECT count(*) AS n, sum(input_tokens) AS input, sum(output_tokens) AS output,
               count(cost_usd) AS priced, sum(cost_usd) AS cost
             FROM session_compaction_unkept WHERE session_id = ?`,
          ) as Statement<[string], UsageRow>,
          remove: db.prepare('DELETE FROM session_compaction_unkept WHERE session_id = ?'),
        },
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
 * Sessions' compactions (schema version 16; the usage of each one's model call since version
 * 18; the usage of a call that left no compaction since version 20). A file older than version
 * 16 (read-only opens) has none; one older than 18, no usage; one older than 20, no unkept calls.
 */
export class SessionCompactionStore {
  readonly #s: ReturnType<typeof prepare> | null;

  constructor(private readonly ctx: StoreContext) {
    const present =
      (ctx.db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'session_compactions'")
        .pluck()
        .get() as number) > 0;
    const withUsage =
      present &&
      (ctx.db
        .prepare("SELECT count(*) FROM pragma_table_info('session_compactions') WHERE name = 'cost_usd'")
        .pluck()
        .get() as number) > 0;
    const withUnkept =
      (ctx.db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'session_compaction_unkept'")
        .pluck()
        .get() as number) > 0;
    this.#s = present ? prepare(ctx, withUsage, withUnkept) : null;
  }

  /** The latest compaction of a session that a history of `upTo` entries reaches, or null. */
  latest(sessionId: string, upTo = Number.MAX_SAFE_INTEGER): SessionCompaction | null {
    const row = this.#s?.latest.get(sessionId, upTo);
    return row === undefined ? null : toCompaction(row);
  }

  /**
   * Records a compaction (its summary redacted) and the usage of the model call that made it
   * (null: the provider reported none). False (nothing written) when the session is gone, holds
   * fewer than `throughSeq` entries, or has a compaction through that entry already.
   */
  add(
    sessionId: string,
    throughSeq: number,
    summary: string,
    summarized: number,
    usage: CompactionUsage | null = null,
  ): boolean {
    const s = this.#writable('add');
    return (
      s.add.run({
        sessionId,
        throughSeq,
        summary: toStoredText(this.ctx, summary) ?? '',
        summarized,
        now: this.ctx.clock(),
        inputTokens: usage?.inputTokens ?? null,
        outputTokens: usage?.outputTokens ?? null,
        costUsd: usage?.costUsd ?? null,
      }).changes > 0
    );
  }

  /**
   * Records the usage of a compaction's model call that left no compaction (`reason`): the
   * tokens were spent, so they count in the session's usage. Nothing is written for a call
   * whose provider reported no usage, or for a session that is gone (false then).
   */
  addUnkept(
    sessionId: string,
    throughSeq: number,
    reason: UnkeptReason,
    usage: CompactionUsage | null,
  ): boolean {
    const s = this.#writable('addUnkept');
    if (s.unkept === null)
      throw new Error('sessionCompactions.addUnkept: the database has no session_compaction_unkept table');
    if (usage === null) return false;
    return (
      s.unkept.add.run({
        sessionId,
        throughSeq,
        reason,
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        costUsd: usage.costUsd ?? null,
        now: this.ctx.clock(),
      }).changes > 0
    );
  }

  /**
   * The usage of a session's compaction calls, summed: the kept compactions' and the calls that
   * left none (cost only when one of them was priced); null when none reported any.
   */
  usage(sessionId: string): CompactionUsage | null {
    const rows = [this.#s?.usage?.get(sessionId), this.#s?.unkept?.usage.get(sessionId)].filter(
      (r): r is UsageRow => r !== undefined && r.n > 0,
    );
    if (rows.length === 0) return null;
    const sum = (f: (r: UsageRow) => number | null) => rows.reduce((t, r) => t + (f(r) ?? 0), 0);
    const priced = rows.some((r) => r.priced > 0);
    return {
      inputTokens: sum((r) => r.input),
      outputTokens: sum((r) => r.output),
      ...(priced ? { costUsd: sum((r) => r.cost) } : {}),
    };
  }

  /** Removes a session's compactions and its unkept calls (inside the removal of the session). */
  removeAll(sessionId: string): void {
    this.#s?.remove.run(sessionId);
    this.#s?.unkept?.remove.run(sessionId);
  }

  #writable(operation: string): ReturnType<typeof prepare> {
    assertWritable(this.ctx, `sessionCompactions.${operation}`);
    if (this.#s === null)
      throw new Error(`sessionCompactions.${operation}: the database has no session_compactions table`);
    return this.#s;
  }
}
