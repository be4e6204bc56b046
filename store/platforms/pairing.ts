import type { Statement } from 'better-sqlite3';
import type { AuditLog } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, toStoredText, type StoreContext } from '../context.ts';

/** A chat a local user paired. */
export interface PairedChat {
  readonly platformId: string;
  readonly chatId: number;
  /** The sender's display name when the code was issued (untrusted text, redacted). */
  readonly label: string | null;
  readonly pairedAt: number;
  readonly pairedBy: string;
  readonly unpairedAt: number | null;
  readonly unpairedBy: string | null;
}

interface ChatRow {
  platform_id: string;
  chat_id: number;
  label: string | null;
  paired_at: number;
  paired_by: string;
  unpaired_at: number | null;
  unpaired_by: string | null;
}

const toChat = (r: ChatRow): PairedChat => ({
  platformId: r.platform_id,
  chatId: r.chat_id,
  label: r.label,
  pairedAt: r.paired_at,
  pairedBy: r.paired_by,
  unpairedAt: r.unpaired_at,
  unpairedBy: r.unpaired_by,
});

/** Limits on pairing codes (the defaults are the runtime's). */
export interface PairingLimits {
  /** How long a code is valid (ms). */
  readonly ttlMs: number;
  /** Most codes one chat is given per hour. */
  readonly perChatPerHour: number;
  /** Most unexpired, unused codes of one connection at once. */
  readonly maxActive: number;
  /** Wrong codes per connection in `failureWindowMs` before confirmations are refused. */
  readonly maxFailures: number;
  readonly failureWindowMs: number;
}

export const DEFAULT_PAIRING_LIMITS: PairingLimits = {
  ttlMs: 10 * 60_000,
  perChatPerHour: 3,
  maxActive: 20,
  maxFailures: 5,
  failureWindowMs: 10 * 60_000,
};

/** Why no code was issued. */
export type IssueRefusal = 'code_active' | 'rate_limited' | 'too_many_pending';
/** Why a confirmation changed nothing. */
export type ConfirmRefusal = 'invalid_or_expired' | 'too_many_failures';

const HOUR = 60 * 60_000;
const DURABLE = { durable: true } as const;

/**
 * Pairing of platform chats: short-lived single-use codes (stored as hashes only) handed to an
 * unknown chat, which a local user confirms (`snotra platforms pair`); the paired chats, durable
 * and audited. Codes are rate-limited per chat and per connection; wrong confirmations are
 * counted, and too many lock confirmation for a while.
 */
export class PlatformPairing {
  readonly #s: {
    chat: Statement<[string, number], ChatRow>;
    chats: Statement<[], ChatRow>;
    upsertChat: Statement<ChatRow>;
    unpair: Statement<[number, string, string, number]>;
    activeForChat: Statement<[string, number, number], { n: number }>;
    issuedSince: Statement<[string, number, number], { n: number }>;
    activeAll: Statement<[string, number], { n: number }>;
    insertCode: Statement<[string, number, string, string | null, number, number]>;
    findCode: Statement<[string, string, number], { chat_id: number; label: string | null }>;
    useCode: Statement<[number, string, string]>;
    failures: Statement<[string, number], { n: number }>;
    fail: Statement<[string, number]>;
    pendingCodes: Statement<[number], { platform_id: string; n: number }>;
  } | null;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
    private readonly limits: PairingLimits = DEFAULT_PAIRING_LIMITS,
  ) {
    const db = ctx.db;
    const present =
      (db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'platform_chats'")
        .pluck()
        .get() as number) > 0;
    this.#s = !present
      ? null
      : {
          chat: db.prepare('SELECT * FROM platform_chats WHERE platform_id = ? AND chat_id = ?'),
          chats: db.prepare('SELECT * FROM platform_chats ORDER BY platform_id, paired_at'),
          upsertChat: db.prepare(
            `INSERT INTO platform_chats (platform_id, chat_id, label, paired_at, paired_by, unpaired_at, unpaired_by)
             VALUES (@platform_id, @chat_id, @label, @paired_at, @paired_by, @unpaired_at, @unpaired_by)
             ON CONFLICT (platform_id, chat_id) DO UPDATE SET label = excluded.label, paired_at = excluded.paired_at,
               paired_by = excluded.paired_by, unpaired_at = NULL, unpaired_by = NULL`,
          ),
          unpair: db.prepare(
            `UPDATE platform_chats SET unpaired_at = ?, unpaired_by = ?
             WHERE platform_id = ? AND chat_id = ? AND unpaired_at IS NULL`,
          ),
          activeForChat: db.prepare(
            `SELECT count(*) AS n FROM platform_pairing_codes
             WHERE platform_id = ? AND chat_id = ? AND used_at IS NULL AND expires_at > ?`,
          ),
          issuedSince: db.prepare(
            'SELECT count(*) AS n FROM platform_pairing_codes WHERE platform_id = ? AND chat_id = ? AND created_at > ?',
          ),
          activeAll: db.prepare(
            `SELECT count(*) AS n FROM platform_pairing_codes
             WHERE platform_id = ? AND used_at IS NULL AND expires_at > ?`,
          ),
          insertCode: db.prepare(
            `INSERT INTO platform_pairing_codes (platform_id, chat_id, code_hash, label, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
          ),
          findCode: db.prepare(
            `SELECT chat_id, label FROM platform_pairing_codes
             WHERE platform_id = ? AND code_hash = ? AND used_at IS NULL AND expires_at > ?`,
          ),
          useCode: db.prepare(
            'UPDATE platform_pairing_codes SET used_at = ? WHERE platform_id = ? AND code_hash = ?',
          ),
          failures: db.prepare(
            'SELECT count(*) AS n FROM platform_pairing_failures WHERE platform_id = ? AND at > ?',
          ),
          fail: db.prepare('INSERT INTO platform_pairing_failures (platform_id, at) VALUES (?, ?)'),
          pendingCodes: db.prepare(
            `SELECT platform_id, count(*) AS n FROM platform_pairing_codes
             WHERE used_at IS NULL AND expires_at > ? GROUP BY platform_id`,
          ),
        };
  }

  /** Whether a chat is paired now. */
  isPaired(platformId: string, chatId: number): boolean {
    const row = this.#s?.chat.get(platformId, chatId);
    return row !== undefined && row.unpaired_at === null;
  }

  /** When a chat was paired, if it is paired now; null otherwise. */
  pairedSince(platformId: string, chatId: number): number | null {
    const row = this.#s?.chat.get(platformId, chatId);
    return row === undefined || row.unpaired_at !== null ? null : row.paired_at;
  }

  /** Every chat ever paired (unpaired ones with their `unpairedAt`). */
  chats(): PairedChat[] {
    return (this.#s?.chats.all() ?? []).map(toChat);
  }

  /** Unexpired, unused codes per connection. */
  pendingCodes(): Record<string, number> {
    const rows = this.#s?.pendingCodes.all(this.ctx.clock()) ?? [];
    return Object.fromEntries(rows.map((r) => [r.platform_id, r.n]));
  }

  /**
   * Stores a new code (its hash) for a chat unless a limit refuses: the chat already holds an
   * unexpired code, it was given `perChatPerHour` codes in the last hour, or the connection has
   * `maxActive` open codes. Returns the expiry, or why not.
   */
  issue(
    platformId: string,
    chatId: number,
    codeHash: string,
    label: string | null,
  ): { issued: true; expiresAt: number } | { issued: false; reason: IssueRefusal } {
    const s = this.#writable('issue');
    const now = this.ctx.clock();
    return this.ctx.tx.run(() => {
      if ((s.activeForChat.get(platformId, chatId, now)?.n ?? 0) > 0)
        return { issued: false as const, reason: 'code_active' as const };
      if ((s.issuedSince.get(platformId, chatId, now - HOUR)?.n ?? 0) >= this.limits.perChatPerHour)
        return { issued: false as const, reason: 'rate_limited' as const };
      if ((s.activeAll.get(platformId, now)?.n ?? 0) >= this.limits.maxActive)
        return { issued: false as const, reason: 'too_many_pending' as const };
      const expiresAt = now + this.limits.ttlMs;
      s.insertCode.run(platformId, chatId, codeHash, toStoredText(this.ctx, label), now, expiresAt);
      return { issued: true as const, expiresAt };
    }, DURABLE);
  }

  /**
   * A local user confirms a code: when it is unexpired and unused, it is used up and its chat
   * paired (audited `platform_paired`), all in one durable transaction. A wrong code is counted;
   * after `maxFailures` within the window every confirmation is refused until it passes.
   */
  confirm(
    platformId: string,
    codeHash: string,
    by: string,
  ): { paired: true; chat: PairedChat } | { paired: false; reason: ConfirmRefusal } {
    const s = this.#writable('confirm');
    const now = this.ctx.clock();
    return this.ctx.tx.run(() => {
      if ((s.failures.get(platformId, now - this.limits.failureWindowMs)?.n ?? 0) >= this.limits.maxFailures)
        return { paired: false as const, reason: 'too_many_failures' as const };
      const code = s.findCode.get(platformId, codeHash, now);
      if (code === undefined) {
        s.fail.run(platformId, now);
        return { paired: false as const, reason: 'invalid_or_expired' as const };
      }
      s.useCode.run(now, platformId, codeHash);
      const row: ChatRow = {
        platform_id: platformId,
        chat_id: code.chat_id,
        label: code.label,
        paired_at: now,
        paired_by: by,
        unpaired_at: null,
        unpaired_by: null,
      };
      s.upsertChat.run(row);
      const event = newAuditRecord(AuditKind.platformPaired, now, {
        platform: platformId,
        chatId: code.chat_id,
        by,
      });
      event.surface = 'platform';
      event.status = 'paired';
      this.audit.record(event);
      return { paired: true as const, chat: toChat(row) };
    }, DURABLE);
  }

  /** Unpairs a chat (audited); false when it was not paired. */
  unpair(platformId: string, chatId: number, by: string): boolean {
    const s = this.#writable('unpair');
    const now = this.ctx.clock();
    return this.ctx.tx.run(() => {
      if (s.unpair.run(now, by, platformId, chatId).changes === 0) return false;
      const event = newAuditRecord(AuditKind.platformUnpaired, now, { platform: platformId, chatId, by });
      event.surface = 'platform';
      event.status = 'unpaired';
      this.audit.record(event);
      return true;
    }, DURABLE);
  }

  #writable(operation: string) {
    assertWritable(this.ctx, `platform pairing ${operation}`);
    if (this.#s === null) throw new Error(`${this.ctx.file}: platform pairing missing (schema older than 7)`);
    return this.#s;
  }
}
