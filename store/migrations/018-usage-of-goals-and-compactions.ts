import type { Migration } from './migration.ts';

/**
 * Version 18: tokens and cost where they were not kept (issue 31). A goal sums the tokens and
 * cost of its iterations (`goals.used_tokens`, `goals.used_cost_usd`; each iteration's own in
 * `goal_iterations.tokens`/`cost_usd` once it ended), for the goal budgets `tokens` and
 * `costUsd`. A compaction keeps the usage of its summarizing model call
 * (`session_compactions.input_tokens`/`output_tokens`/`cost_usd`; null when the provider
 * reported none), which counts in its session's usage. Rows written before stay without (0 or
 * null: nothing was known).
 */
export const usageOfGoalsAndCompactions: Migration = {
  version: 18,
  name: 'usage-of-goals-and-compactions',
  sql: `
ALTER TABLE goals ADD COLUMN used_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE goals ADD COLUMN used_cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE goal_iterations ADD COLUMN tokens INTEGER;
ALTER TABLE goal_iterations ADD COLUMN cost_usd REAL;
ALTER TABLE session_compactions ADD COLUMN input_tokens INTEGER;
ALTER TABLE session_compactions ADD COLUMN output_tokens INTEGER;
ALTER TABLE session_compactions ADD COLUMN cost_usd REAL;
`,
};
