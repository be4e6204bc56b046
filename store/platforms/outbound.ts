import type { Statement } from 'better-sqlite3';
import type { AuditLog } from '../audit/log.ts';
import { AuditKind, newAuditRecord } from '../audit/types.ts';
import { assertWritable, toStoredText, type StoreContext } from '../context.ts';

/** The state of one reply part. */
export type OutboundStatus = 'sending' | 'sent' | 'failed' | 'unknown';

/** How one part's request ended. */
export type PartResult =
  | { readonly status: 'sent'; readonly remoteId: number }
  | { readonly status: 'failed' | 'unknown'; readonly error: string };

/** One part of a reply, as the outbound journal holds it. */
export interface OutboundRecord {
  readonly key: string;
  readonly part: number;
  readonly parts: number;
  readonly platformId: string;
  readonly chatId: number;
  readonly status: OutboundStatus;
  /** The platform's id of the sent message. */
  readonly remoteId: number | null;
  /** Why it failed (the platform's description, redacted). */
  readonly error: string | null;
  readonly updatedAt: number;
}

interface OutboundRow {
  key: string;
  part: number;
  parts: number;
  platform_id: string;
  chat_id: number;
  status: OutboundStatus;
  remote_id: number | null;
  error: string | null;
  updated_at: number;
}

const toRecord = (r: OutboundRow): OutboundRecord => ({
  key: r.key,
  part: r.part,
  parts: r.parts,
  platformId: r.platform_id,
  chatId: r.chat_id,
  status: r.status,
  remoteId: r.remote_id,
  error: r.error,
  updatedAt: r.updated_at,
});

const DURABLE = { durable: true } as const;

/** The largest page of `undeliveredPage`. */
export const MAX_UNDELIVERED_PAGE = 1000;

/** A page of undelivered reply parts and the cursor of the next (null: none). */
export interface UndeliveredPage {
  readonly parts: OutboundRecord[];
  readonly next: string | null;
}

/** A paging cursor that `undeliveredPage` did not make (or that was altered). */
export class BadCursorError extends Error {
  readonly code = 'bad_cursor';
}

/** The cursor after `r`: its sort key, as opaque base64url JSON. */
function makeCursor(r: OutboundRecord): string {
  return Buffer.from(JSON.stringify([r.updatedAt, r.key, r.part])).toString('base64url');
}

function parseCursor(cursor: string): { at: number; key: string; part: number } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    v = null;
  }
  if (
    Array.isArray(v) &&
    v.length === 3 &&
    Number.isSafeInteger(v[0]) &&
    typeof v[1] === 'string' &&
    Number.isSafeInteger(v[2])
  )
    return { at: v[0] as number, key: v[1], part: v[2] as number };
  throw new BadCursorError(`not a cursor of this list: ${JSON.stringify(cursor.slice(0, 80))}`);
}

/**
 * The outbound journal: exactly what was sent of each reply (idempotency key
 * `telegram:<chatId>:<messageId>`, one row per part). A part is written `sending` durably
 * before its request and `sent` only after the platform answered ok, so a restart never sends
 * a `sent` part again. A part still `sending` at boot was cut mid-request: whether it arrived is
 * unknown, and the platform has no idempotency key to ask with; it becomes `unknown` (audited)
 * and is never resent — a repeated message is worse than a missing one we can name.
 */
export class PlatformOutbound {
  readonly #s: {
    get: Statement<[string, number], OutboundRow>;
    insert: Statement<OutboundRow>;
    finish: Statement<{
      key: string;
      part: number;
      status: OutboundStatus;
      remote_id: number | null;
      error: string | null;
      updated_at: number;
    }>;
    cut: Statement<[string], OutboundRow>;
    release: Statement<[string, number]>;
    byKey: Statement<[string], OutboundRow>;
    failedSinceNotice: Statement<{ platform: string; chat: number; notice: string }, { n: number }>;
    undelivered: Statement<{ limit: number }, OutboundRow>;
    undeliveredAfter: Statement<{ at: number; key: string; part: number; limit: number }, OutboundRow>;
  } | null;

  constructor(
    private readonly ctx: StoreContext,
    private readonly audit: AuditLog,
  ) {
    const db = ctx.db;
    const present =
      (db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'platform_outbound'")
        .pluck()
        .get() as number) > 0;
    this.#s = !present
      ? null
      : {
          get: db.prepare('SELECT * FROM platform_outbound WHERE key = ? AND part = ?'),
          insert: db.prepare(
            `INSERT INTO platform_outbound (key, part, parts, platform_id, chat_id, status, remote_id, error, updated_at)
             VALUES (@key, @part, @parts, @platform_id, @chat_id, @status, @remote_id, @error, @updated_at)`,
          ),
          finish: db.prepare(
            `UPDATE platform_outbound SET status = @status, remote_id = @remote_id, error = @error,
               updated_at = @updated_at WHERE key = @key AND part = @part AND status = 'sending'`,
          ),
          cut: db.prepare("SELECT * FROM platform_outbound WHERE platform_id = ? AND status = 'sending'"),
          release: db.prepare(
            "DELETE FROM platform_outbound WHERE key = ? AND part = ? AND status = 'sending'",
          ),
          byKey: db.prepare('SELECT * FROM platform_outbound WHERE key = ? ORDER BY part'),
          // Failed reply parts of a chat since its last notice about them (tried or not, once).
          failedSinceNotice: db.prepare(
            `SELECT count(*) AS n FROM platform_outbound
              WHERE platform_id = @platform AND chat_id = @chat AND status = 'failed'
                AND key NOT LIKE '%' || @notice
                AND updated_at >= coalesce((SELECT max(updated_at) FROM platform_outbound
                  WHERE platform_id = @platform AND chat_id = @chat AND key LIKE '%' || @notice
                    AND status <> 'sending'), 0)`,
          ),
          // Newest first; (updated_at, key, part) is unique, so a page ends where the next begins.
          undelivered: db.prepare(
            `SELECT * FROM platform_outbound WHERE status <> 'sent'
             ORDER BY updated_at DESC, key DESC, part DESC LIMIT @limit`,
          ),
          undeliveredAfter: db.prepare(
            `SELECT * FROM platform_outbound WHERE status <> 'sent'
               AND (updated_at, key, part) < (@at, @key, @part)
             ORDER BY updated_at DESC, key DESC, part DESC LIMIT @limit`,
          ),
        };
  }

  /**
   * Claims a part for sending: writes it `sending` (durably) and returns null when it was never
   * tried; otherwise returns the record as it is (sent, failed or unknown: do not send).
   */
  begin(input: {
    key: string;
    part: number;
    parts: number;
    platformId: string;
    chatId: number;
  }): OutboundRecord | null {
    const s = this.#writable('begin');
    return this.ctx.tx.run(() => {
      const existing = s.get.get(input.key, input.part);
      if (existing !== undefined) return toRecord(existing);
      s.insert.run({
        key: input.key,
        part: input.part,
        parts: input.parts,
        platform_id: input.platformId,
        chat_id: input.chatId,
        status: 'sending',
        remote_id: null,
        error: null,
        updated_at: this.ctx.clock(),
      });
      return null;
    }, DURABLE);
  }

  /**
   * Records how a part's request ended: `sent` (with the platform's id), `failed` (the platform
   * answered no) or `unknown` (no answer after the request may have left: never resent).
   */
  finish(key: string, part: number, result: PartResult): void {
    const s = this.#writable('finish');
    this.ctx.tx.run(
      () =>
        s.finish.run({
          key,
          part,
          status: result.status,
          remote_id: result.status === 'sent' ? result.remoteId : null,
          error: result.status === 'sent' ? null : toStoredText(this.ctx, result.error),
          updated_at: this.ctx.clock(),
        }),
      DURABLE,
    );
  }

  /**
   * Gives a claimed part back when it is known not to have been sent (the platform refused it
   * with "try again later" and the runtime is stopping): the next start sends it.
   */
  release(key: string, part: number): void {
    const s = this.#writable('release');
    this.ctx.tx.run(() => s.release.run(key, part), DURABLE);
  }

  /**
   * At start: every part of `platformId` still `sending` was cut by a crash mid-request. Each
   * becomes `unknown` (audited `platform_reply_unknown`) and is never resent. Returns them.
   */
  markCut(platformId: string): OutboundRecord[] {
    const s = this.#writable('markCut');
    return this.ctx.tx.run(() => {
      const cut = s.cut.all(platformId);
      const at = this.ctx.clock();
      for (const row of cut) {
        s.finish.run({
          key: row.key,
          part: row.part,
          status: 'unknown',
          remote_id: null,
          error: 'cut by a restart mid-request; not resent',
          updated_at: at,
        });
        const event = newAuditRecord(AuditKind.platformReplyUnknown, at, {
          platform: platformId,
          key: row.key,
          part: row.part,
          parts: row.parts,
        });
        event.surface = 'platform';
        event.status = 'unknown';
        this.audit.record(event);
      }
      return cut.map((r) => ({ ...toRecord(r), status: 'unknown' as const }));
    }, DURABLE);
  }

  /**
   * How many reply parts to chat `chatId` failed for good since the chat was last told (a part
   * whose key ends with `noticeSuffix` is such a notice; a failed notice counts as told).
   */
  failedSinceNotice(platformId: string, chatId: number, noticeSuffix: string): number {
    return (
      this.#s?.failedSinceNotice.get({ platform: platformId, chat: chatId, notice: noticeSuffix })?.n ?? 0
    );
  }

  /** The parts of one reply, in order. */
  parts(key: string): OutboundRecord[] {
    return (this.#s?.byKey.all(key) ?? []).map(toRecord);
  }

  /**
   * One page of the parts not delivered — failed, unknown, or still to send (`sending`) —
   * newest first: at most `limit` (1 to `MAX_UNDELIVERED_PAGE`) after `cursor` (the `next` of
   * the page before; none for the first). `next` is null on the last page. Throws
   * `BadCursorError` for a cursor this method did not make.
   */
  undeliveredPage(page: { cursor?: string | undefined; limit: number }): UndeliveredPage {
    const s = this.#s;
    if (s === null) return { parts: [], next: null };
    const limit = Math.min(MAX_UNDELIVERED_PAGE, Math.max(1, Math.trunc(page.limit)));
    // One row more than asked says whether there is a next page.
    const rows =
      page.cursor === undefined
        ? s.undelivered.all({ limit: limit + 1 })
        : s.undeliveredAfter.all({ ...parseCursor(page.cursor), limit: limit + 1 });
    const parts = rows.slice(0, limit).map(toRecord);
    const last = parts[parts.length - 1];
    return {
      parts,
      next: rows.length > limit && last !== undefined ? makeCursor(last) : null,
    };
  }

  /** Every part not delivered (failed, unknown or still to send), newest first, read page by page. */
  undelivered(): OutboundRecord[] {
    const out: OutboundRecord[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = this.undeliveredPage({ cursor, limit: MAX_UNDELIVERED_PAGE });
      out.push(...page.parts);
      if (page.next === null) return out;
      cursor = page.next;
    }
  }

  #writable(operation: string) {
    assertWritable(this.ctx, `platform outbound ${operation}`);
    if (this.#s === null) throw new Error(`${this.ctx.file}: platform journal missing (schema older than 7)`);
    return this.#s;
  }
}
