import { existsSync } from 'node:fs';
import { resolveDbPath } from '../../store/index.ts';
import type { SessionApproval, StandingApproval } from '../../store/index.ts';
import { openLocalStore } from './local-store.ts';

export type { SessionApproval, StandingApproval };

/** The active grants of a state dir, or `null` when it has no database yet. */
export interface ActiveGrants {
  readonly session: readonly SessionApproval[];
  readonly standing: readonly StandingApproval[];
}

/**
 * Every active session and standing approval of a state dir, read through a read-only store;
 * null when no runtime ever ran there (no database). Never creates or changes anything.
 */
export function readActiveGrants(stateDir: string): ActiveGrants | null {
  if (!existsSync(resolveDbPath({ stateDir }))) return null;
  const store = openLocalStore(stateDir, true);
  try {
    return {
      session: store.sessionApprovals.listAllActive(),
      standing: store.standingApprovals.listAllActive(),
    };
  } finally {
    store.close();
  }
}
