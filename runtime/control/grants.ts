import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
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

/** A grant as `snotra grants` shows it: a session approval or a standing approval. */
export type GrantView =
  ({ readonly kind: 'session' } & SessionApproval) | ({ readonly kind: 'standing' } & StandingApproval);

/** Every active grant of a state dir: session approvals, then standing approvals, oldest first. */
export function listGrants(stateDir: string): GrantView[] {
  const store = openLocalStore(stateDir, true);
  try {
    return [
      ...store.sessionApprovals.listAllActive().map((g) => ({ kind: 'session' as const, ...g })),
      ...store.standingApprovals.listAllActive().map((g) => ({ kind: 'standing' as const, ...g })),
    ];
  } finally {
    store.close();
  }
}

/** Raised when no grant has the id given. */
export class GrantNotFoundError extends Error {
  readonly code = 'grant_not_found';
}

/**
 * Revokes a grant by id as the local user (audited). A running runtime reads grants from the
 * store for every call, so the next call is decided without it. Revoking only takes authority
 * away, so unlike a decision it is not refused from a process the runtime started.
 */
export function revokeGrant(stateDir: string, id: string): { grant: GrantView; user: string } {
  const user = `local:${userInfo().username}`;
  const store = openLocalStore(stateDir, false);
  try {
    if (store.sessionApprovals.get(id) !== null)
      return { grant: { kind: 'session', ...store.sessionApprovals.revoke(id, { revokedBy: user }) }, user };
    if (store.standingApprovals.get(id) !== null)
      return {
        grant: { kind: 'standing', ...store.standingApprovals.revoke(id, { revokedBy: user }) },
        user,
      };
    throw new GrantNotFoundError(`no session or standing grant with id ${JSON.stringify(id)}`);
  } finally {
    store.close();
  }
}
