import { z } from 'zod';
import { GoalLoop } from './goal-loops.ts';
import { Platform } from './platforms.ts';
import { Scheduled } from './scheduled.ts';

/** The `surfaces` section: where tasks come from besides the CLI (chat, schedules, goal loops, platforms). */
export const SurfacesSection = z
  .strictObject({
    chat: z
      .strictObject({
        agent: z.string().min(1).optional().describe('The agent chat messages go to (a key of `agents`).'),
      })
      .optional()
      .describe('The chat surface.'),
    scheduled: z
      .array(Scheduled.describe('One scheduled task.'))
      .default([])
      .describe('Tasks started on a cron schedule; unattended (approvals park in the Inbox).'),
    goalLoops: z
      .array(GoalLoop.describe('One goal loop.'))
      .default([])
      .describe(
        'Goals an agent works on over several unattended runs (surface "goal"), started and controlled with `snotra goal`.',
      ),
    platforms: z
      .array(Platform)
      .default([])
      .describe(
        "Messaging platform connections: each paired chat's messages become unattended runs, answered in the chat.",
      ),
  })
  .default({ scheduled: [], goalLoops: [], platforms: [] })
  .describe('Where tasks come from besides the CLI: chat, schedules, messaging platforms.');
