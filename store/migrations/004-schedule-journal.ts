import type { Migration } from './migration.ts';

/**
 * Version 4: the scheduler's journal. Every firing of a scheduled task — its identity is the task
 * id and the scheduled fire time — is recorded before its run is started (`started`, with the run
 * id it starts) or when it is not run (`skipped`, with the reason). The primary key makes a second
 * record of one firing impossible, so a restart can never start the same firing twice; rows are
 * final. `schedule_tasks` remembers since when each task's pattern is known, the reference for
 * firings missed while the runtime was down.
 */
export const scheduleJournal: Migration = {
  version: 4,
  name: 'schedule-journal',
  sql: `
CREATE TABLE schedule_tasks (
  task_id TEXT PRIMARY KEY,
  pattern TEXT NOT NULL,
  since INTEGER NOT NULL
) STRICT;
CREATE TABLE schedule_firings (
  task_id TEXT NOT NULL,
  fire_at INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('started', 'skipped')),
  reason TEXT,
  run_id TEXT,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (task_id, fire_at),
  CHECK ((status = 'started') = (run_id IS NOT NULL))
) STRICT, WITHOUT ROWID;
CREATE TRIGGER schedule_firings_final BEFORE UPDATE ON schedule_firings
  BEGIN SELECT RAISE(ABORT, 'schedule firings are final'); END;
CREATE TRIGGER schedule_firings_no_delete BEFORE DELETE ON schedule_firings
  BEGIN SELECT RAISE(ABORT, 'schedule firings are final'); END;
`,
};
