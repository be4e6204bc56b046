import type { Migration } from './migration.ts';

/**
 * Version 5: a human's decision may carry a short reason ("use the staging bucket instead").
 * A denial's reason reaches the model in its `tool.denied` observation, so the model can try
 * something else; the reason is redacted before it is stored, like every other free text.
 * Older rows have none (NULL).
 */
export const approvalDecisionReason: Migration = {
  version: 5,
  name: 'approval-decision-reason',
  sql: `ALTER TABLE approvals ADD COLUMN decision_reason TEXT;`,
};
