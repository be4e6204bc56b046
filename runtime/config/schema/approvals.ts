import { z } from 'zod';

/** The `approvals` section: how long an approval stays open before it expires (ms); default one day. */
export const ApprovalsSection = z
  .strictObject({
    ttlMs: z
      .int()
      .positive()
      .optional()
      .describe('How long an approval stays open before it expires, in ms (default one day).'),
  })
  .default({})
  .describe('Approval requests.');
