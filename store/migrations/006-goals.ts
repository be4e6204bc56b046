import type { Migration } from './migration.ts';

/**
 * Version 6: goal loops. `goals` holds one row per configured goal that was ever started: its
 * objective, status, iteration count, usage, the evidence of a claimed completion and the goal
 * machine's persisted snapshot. `epoch` grows each time a finished goal is started again; every
 * write of a goal's state is guarded by its id and epoch, so a stale iteration can never bill a
 * restarted goal. `goal_iterations` is the journal of iterations: identity goal id + epoch +
 * iteration number, recorded before the iteration's run starts (its run id derives from the
 * identity); the primary key makes a second record of one iteration impossible. `goal_controls`
 * holds the human's requests (start, pause, resume, cancel) until the runtime applies them.
 */
export const goals: Migration = {
  version: 6,
  name: 'goals',
  sql: `
CREATE TABLE goals (
  goal_id TEXT PRIMARY KEY,
  epoch INTEGER NOT NULL CHECK (epoch >= 1),
  agent_id TEXT NOT NULL,
  objective TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK (status IN ('active', 'paused', 'complete', 'budget_limited', 'failed', 'cancelled')),
  stop_reason TEXT,
  parked INTEGER NOT NULL DEFAULT 0 CHECK (parked IN (0, 1)),
  iteration INTEGER NOT NULL DEFAULT 0 CHECK (iteration >= 0),
  max_iterations INTEGER NOT NULL CHECK (max_iterations >= 1),
  budget TEXT NOT NULL,
  used_model_calls INTEGER NOT NULL DEFAULT 0,
  used_tool_calls INTEGER NOT NULL DEFAULT 0,
  used_wall_ms INTEGER NOT NULL DEFAULT 0,
  evidence TEXT,
  snapshot TEXT,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE goal_iterations (
  goal_id TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  iteration INTEGER NOT NULL CHECK (iteration >= 1),
  run_id TEXT NOT NULL UNIQUE,
  budget TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('started', 'ended')),
  outcome TEXT,
  model_calls INTEGER,
  tool_calls INTEGER,
  wall_ms INTEGER,
  claim TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  PRIMARY KEY (goal_id, epoch, iteration)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER goal_iterations_no_delete BEFORE DELETE ON goal_iterations
  BEGIN SELECT RAISE(ABORT, 'goal iterations are a journal'); END;
CREATE TABLE goal_controls (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  goal_id TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('start', 'pause', 'resume', 'cancel')),
  requested_by TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  applied_at INTEGER,
  result TEXT
) STRICT;
CREATE INDEX goal_controls_pending ON goal_controls (seq) WHERE applied_at IS NULL;
`,
};
