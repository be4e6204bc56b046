import type { Migration } from './migration.ts';

/**
 * Version 17: a run's trace context (issue 39). `traceparent` is the W3C trace context of the
 * run's first `invoke_agent` span, written once when telemetry first sees the run start, so a
 * run parked and resumed after a restart continues the same trace. `attrs` holds the run's
 * span attributes (session, task) as JSON, for the spans of its resumed part. Kept only while
 * telemetry is on; a row without telemetry is never written.
 */
export const runTraces: Migration = {
  version: 17,
  name: 'run-traces',
  sql: `
CREATE TABLE run_traces (
  run_id TEXT PRIMARY KEY,
  traceparent TEXT NOT NULL,
  attrs TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
`,
};
