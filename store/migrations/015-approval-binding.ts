import type { Migration } from './migration.ts';

/**
 * Version 15: an approval binds exactly what was approved (issue 37). `args_hash` is the SHA-256
 * of the call's RFC 8785-canonical arguments as the model proposed them (before redaction), which
 * the executor compares with the arguments it is about to run; `policy_hash` hashes the
 * policy-relevant config in force when it was requested; `decided_surface` and `decided_node`
 * say through which surface (cli, sidecar, …) and which cluster node the human decided. Older
 * rows have none (NULL): an approval without a hash was given before binding existed and is
 * honoured as it was then.
 */
export const approvalBinding: Migration = {
  version: 15,
  name: 'approval-binding',
  sql: `
ALTER TABLE approvals ADD COLUMN args_hash TEXT;
ALTER TABLE approvals ADD COLUMN policy_hash TEXT;
ALTER TABLE approvals ADD COLUMN decided_surface TEXT;
ALTER TABLE approvals ADD COLUMN decided_node TEXT;
`,
};
