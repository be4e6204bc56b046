import { z } from 'zod';

/** One scheduled task (`surfaces.scheduled[]`): an agent, a cron pattern or ISO time, and a message. */
export const Scheduled = z.strictObject({
  id: z.string().min(1).describe('A stable name of this schedule, e.g. "daily-report".'),
  agent: z.string().min(1).describe('The agent (a key of `agents`) that runs it.'),
  cron: z
    .string()
    .min(1)
    .describe(
      'When it fires: a cron pattern "minute hour day-of-month month day-of-week" (5 to 7 fields, croner), e.g. "0 9 * * 1-5" for 09:00 on weekdays, or an ISO date-time such as "2026-12-24T09:00:00Z" for a one-shot task.',
    )
    // An editor hint only (5 to 7 fields, a nickname such as "@daily" or an ISO date-time); croner checks the
    // pattern itself when the config loads (validate.ts), with the precise error.
    .meta({
      pattern: '^\\s*(@[a-z]+|\\S+(\\s+\\S+){4,6}|\\d{4}-\\d{2}-\\d{2}T\\S+)\\s*$',
      examples: ['0 9 * * 1-5', '*/15 * * * *', '@daily', '2026-12-24T09:00:00Z'],
    }),
  message: z.string().describe('The task message the agent receives at each firing.'),
  /** Firings missed while the runtime was down: recorded as skipped (default) or run once. */
  missed: z
    .enum(['skip', 'run-once'])
    .default('skip')
    .describe('Firings missed while the runtime was down: recorded as "skip"ped (default) or "run-once".'),
  /** With `run-once`: how old the newest missed firing may be and still run (ms, default 1 h). */
  catchUpWindowMs: z
    .int()
    .positive()
    .optional()
    .describe(
      'With "run-once": how old the newest missed firing may be and still run, in ms (default one hour).',
    ),
});
