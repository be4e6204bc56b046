import { Redactor, StoreError, openStore, resolveDbPath } from '../../store/index.ts';
import type { AuditEvent, ChainVerification, Store } from '../../store/index.ts';
import { provenanceOf, type Provenance } from '../read/provenance.ts';

export type { AuditEvent, ChainVerification };

/** The audit log of a state dir (or database file) could not be opened; the message says why. */
export class AuditUnavailableError extends Error {
  readonly code = 'audit_unavailable';
}

/** Read-only access to an audit log for the CLI. */
export interface AuditReader {
  readonly file: string;
  /** Events in order, of one run or all. */
  events(runId?: string): Iterable<AuditEvent>;
  /** Walks the whole hash chain; names the first broken event. */
  verify(): ChainVerification;
  /** The provenance chain of one call, or null when the log has no event of it. */
  provenance(runId: string, callId: string): Provenance | null;
  close(): void;
}

/** Opens the audit log read-only: `--db FILE` wins over `--state-dir DIR` (default: the config's state dir, see `stateDirOf`). */
export function openAuditReader(
  location: { db?: string | undefined; stateDir?: string | undefined },
  cwd: string,
  options: { integrityCheck?: boolean } = {},
): AuditReader {
  const file = resolveDbPath({ db: location.db, stateDir: location.stateDir }, cwd);
  let store: Store;
  try {
    store = openStore({
      path: file,
      redactor: new Redactor(),
      readonly: true,
      integrityCheck: options.integrityCheck === true,
    });
  } catch (error) {
    const message = error instanceof StoreError ? error.message : String(error);
    throw new AuditUnavailableError(`cannot read the audit log at ${file}: ${message}`, { cause: error });
  }
  return {
    file,
    events: (runId) => store.audit.iterate(runId === undefined ? {} : { runId }),
    verify: () => store.audit.verifyChain(),
    provenance: (runId, callId) => provenanceOf(store, runId, callId),
    close: () => store.close(),
  };
}
