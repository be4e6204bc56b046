import { userInfo } from 'node:os';
import {
  BadCursorError,
  MAX_UNDELIVERED_PAGE,
  type OutboundRecord,
  type PairedChat,
} from '../../store/index.ts';
import { descendsFrom } from '../control/ancestry.ts';
import { openLocalStore, runtimePid } from '../control/local-store.ts';
import { hashPairingCode, normalizePairingCode } from './pairing-code.ts';

export { BadCursorError, MAX_UNDELIVERED_PAGE };

/** Pairing refused because it came from a process the runtime started (an agent's shell). */
export class PairingFromAgentError extends Error {
  readonly code = 'pairing_from_agent_process';
}

/** What `snotra platforms list` shows. */
export interface PlatformsView {
  readonly chats: PairedChat[];
  /** Unexpired, unused pairing codes per connection (never the codes). */
  readonly pendingCodes: Record<string, number>;
  /** Reply parts not delivered: failed, unknown, or still to send (newest first; one page when paged). */
  readonly undelivered: OutboundRecord[];
  /** The cursor of the next page of `undelivered` (null: this was the last, or unpaged). */
  readonly next: string | null;
}

/** Paging of `listPlatforms`: without `limit`, every undelivered part. */
export interface UndeliveredPaging {
  readonly limit?: number | undefined;
  readonly after?: string | undefined;
}

function refuseFromAgent(stateDir: string, what: string): void {
  const pid = runtimePid(stateDir);
  if (pid !== null && descendsFrom(pid))
    throw new PairingFromAgentError(
      `platform chats cannot be ${what} from a process started by the runtime (an agent’s tool)`,
    );
}

/**
 * Confirms a pairing code as the local user: the chat it was given to is paired (durable,
 * audited), the code is used up. Refused from a process the runtime started, for a code that
 * is malformed, unknown, used or expired, and after too many wrong codes.
 */
export function pairAsLocalUser(
  stateDir: string,
  platformId: string,
  code: string,
): { ok: true; chat: PairedChat; user: string } | { ok: false; reason: string; message: string } {
  refuseFromAgent(stateDir, 'paired');
  const canonical = normalizePairingCode(code);
  if (canonical === null)
    return {
      ok: false,
      reason: 'invalid_code',
      message: 'a pairing code is 8 letters and digits, as the bot sent it (e.g. "7KQ2-M9XD")',
    };
  const user = `local:${userInfo().username}`;
  const store = openLocalStore(stateDir, false);
  try {
    const r = store.platforms.pairing.confirm(platformId, hashPairingCode(platformId, canonical), user);
    if (r.paired) return { ok: true, chat: r.chat, user };
    return {
      ok: false,
      reason: r.reason,
      message:
        r.reason === 'too_many_failures'
          ? `too many wrong codes for ${JSON.stringify(platformId)} lately; wait ten minutes and ask the bot for a new code`
          : `no open pairing code matches for ${JSON.stringify(platformId)} (wrong, used or expired: codes last ten minutes)`,
    };
  } finally {
    store.close();
  }
}

/** Unpairs a chat as the local user (audited); false when it was not paired. */
export function unpairAsLocalUser(
  stateDir: string,
  platformId: string,
  chatId: number,
): { ok: boolean; user: string } {
  refuseFromAgent(stateDir, 'unpaired');
  const user = `local:${userInfo().username}`;
  const store = openLocalStore(stateDir, false);
  try {
    return { ok: store.platforms.pairing.unpair(platformId, chatId, user), user };
  } finally {
    store.close();
  }
}

/** Paired chats, open pairing codes (counts) and undelivered reply parts of a state dir. */
export function listPlatforms(stateDir: string, paging: UndeliveredPaging = {}): PlatformsView {
  const store = openLocalStore(stateDir, true);
  try {
    const page =
      paging.limit === undefined && paging.after === undefined
        ? { parts: store.platforms.outbound.undelivered(), next: null }
        : store.platforms.outbound.undeliveredPage({
            cursor: paging.after,
            limit: paging.limit ?? MAX_UNDELIVERED_PAGE,
          });
    return {
      chats: store.platforms.pairing.chats(),
      pendingCodes: store.platforms.pairing.pendingCodes(),
      undelivered: page.parts,
      next: page.next,
    };
  } finally {
    store.close();
  }
}
