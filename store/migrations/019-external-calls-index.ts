import type { Migration } from './migration.ts';

/**
 * Version 19: a partial index of the calls whose effects leave the machine (`risk` `external`),
 * by the time they started. A rewind lists the external calls made since its checkpoint as not
 * rewindable; without the index it read and decoded the whole audit log for them, so its cost
 * grew with the history of every run. The index holds only external calls (the time and the
 * key of each), so a call of any other risk costs nothing more to record.
 */
export const externalCallsIndex: Migration = {
  version: 19,
  name: 'external-calls-index',
  sql: `
CREATE INDEX ledger_calls_external ON ledger_calls(started_at) WHERE risk = 'external';
`,
};
