import type { Statement } from 'better-sqlite3';
import type { StoreContext } from '../context.ts';

/** A call whose effect left the machine (`risk` `external`), as the ledger recorded it. */
export interface ExternalCall {
  readonly runId: string | null;
  readonly callId: string;
  readonly tool: string;
  /** What it reached (a URL, a channel, an MCP server's target), redacted as stored. */
  readonly resource: string | null;
  /** When it started (its first attempt). */
  readonly startedAt: number;
  /** Its last attempt's state: `started` (unfinished), `completed`, `failed` or `interrupted`. */
  readonly status: string;
}

/** @internal The query (exported so a test can check that the index answers it). */
export const EXTERNAL_SINCE_SQL = `SELECT run_id, call_id, tool, resource, started_at, status FROM tool_calls
  WHERE risk = 'external' AND started_at >= ? ORDER BY started_at, idempotency_key`;

interface Row {
  run_id: string | null;
  call_id: string;
  tool: string;
  resource: string | null;
  started_at: number;
  status: string;
}

/**
 * The external calls of the ledger by start time: what a rewind lists as not rewindable. From
 * schema version 19 on a partial index holds only external calls, so the answer costs what it
 * returns, not the size of the ledger or of the audit log. Reads go through `tool_calls` (the
 * table of versions 1–2, a view from 3 on), so a read-only open of an older file answers too.
 */
export class ExternalCalls {
  readonly #since: Statement<[number], Row>;

  constructor(ctx: StoreContext) {
    this.#since = ctx.db.prepare(EXTERNAL_SINCE_SQL);
  }

  /** The external calls started at `at` or later, oldest first. */
  since(at: number): ExternalCall[] {
    return this.#since.all(at).map((r) => ({
      runId: r.run_id,
      callId: r.call_id,
      tool: r.tool,
      resource: r.resource,
      startedAt: r.started_at,
      status: r.status,
    }));
  }
}
