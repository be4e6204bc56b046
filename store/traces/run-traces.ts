import type { Statement } from 'better-sqlite3';
import { assertWritable, fromStoredJson, toStoredJson, type StoreContext } from '../context.ts';

/** A run's stored trace context (issue 39): where its resumed spans join its trace. */
export interface RunTrace {
  readonly runId: string;
  /** The W3C `traceparent` of the run's first `invoke_agent` span. */
  readonly traceparent: string;
  /** The run's span attributes (strings only), redacted as they were stored. */
  readonly attrs: Readonly<Record<string, string>>;
  readonly createdAt: number;
}

interface Row {
  run_id: string;
  traceparent: string;
  attrs: string;
  created_at: number;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The `run_traces` table: one row per run telemetry saw start, written once (a second `put` for
 * the same run keeps the first: the trace a run began in is the one it continues).
 */
export class RunTraces {
  // Prepared at first use: a file of an older version opened read-only has no such table.
  #insert: Statement | null = null;
  #get: Statement | null = null;

  constructor(private readonly ctx: StoreContext) {}

  /** Stores a run's trace context; refuses a malformed `traceparent`, naming it. */
  put(runId: string, traceparent: string, attrs: Readonly<Record<string, string>>): void {
    assertWritable(this.ctx, 'runTraces.put');
    if (!TRACEPARENT.test(traceparent))
      throw new Error(`runTraces.put(${runId}): "${traceparent}" is not a W3C traceparent`);
    this.#insert ??= this.ctx.db.prepare(
      'INSERT OR IGNORE INTO run_traces (run_id, traceparent, attrs, created_at) VALUES (?, ?, ?, ?)',
    );
    this.#insert.run(runId, traceparent, toStoredJson(this.ctx, attrs), this.ctx.clock());
  }

  /** The run's trace context, or null when telemetry never saw it start. */
  get(runId: string): RunTrace | null {
    this.#get ??= this.ctx.db.prepare('SELECT * FROM run_traces WHERE run_id = ?');
    const row = this.#get.get(runId) as Row | undefined;
    if (row === undefined) return null;
    const attrs = fromStoredJson(this.ctx, row.attrs, `run_traces.attrs of ${runId}`);
    const strings: Record<string, string> = {};
    if (attrs !== null && typeof attrs === 'object')
      for (const [k, v] of Object.entries(attrs)) if (typeof v === 'string') strings[k] = v;
    return { runId: row.run_id, traceparent: row.traceparent, attrs: strings, createdAt: row.created_at };
  }
}
