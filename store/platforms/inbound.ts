import type { Statement } from 'better-sqlite3';
import { assertWritable, toStoredText, type StoreContext } from '../context.ts';

/** What became of an inbound message. */
export type InboundStatus = 'queued' | 'run' | 'pairing' | 'ignored';

/** One update as the platform delivered it (already parsed and checked by the adapter). */
export interface InboundUpdate {
  readonly updateId: number;
  /** Null for an update that holds no text message (it only moves the offset). */
  readonly message: {
    readonly chatId: number;
    readonly chatType: string;
    readonly messageId: number;
    /** A display name of the sender, for the person pairing (untrusted text). */
    readonly sender: string | null;
    readonly text: string;
    /** When the platform says it was sent (ms since the epoch; Telegram gives whole seconds), or null. */
    readonly sentAt: number | null;
  } | null;
}

/** One row of the inbound journal. */
export interface InboundRecord {
  readonly platformId: string;
  readonly updateId: number;
  readonly chatId: number;
  readonly chatType: string;
  readonly messageId: number;
  readonly sender: string | null;
  /** The message text, redacted (a registered secret never reaches the run). */
  readonly text: string;
  /** When the platform says it was sent, or null. */
  readonly sentAt: number | null;
  readonly receivedAt: number;
  readonly status: InboundStatus;
  readonly reason: string | null;
  readonly runId: string | null;
  readonly repliedAt: number | null;
}

interface InboundRow {
  platform_id: string;
  update_id: number;
  chat_id: number;
  chat_type: string;
  message_id: number;
  sender: string | null;
  text: string;
  sent_at: number | null;
  received_at: number;
  status: InboundStatus;
  reason: string | null;
  run_id: string | null;
  replied_at: number | null;
}

const toRecord = (r: InboundRow): InboundRecord => ({
  platformId: r.platform_id,
  updateId: r.update_id,
  chatId: r.chat_id,
  chatType: r.chat_type,
  messageId: r.message_id,
  sender: r.sender,
  text: r.text,
  sentAt: r.sent_at,
  receivedAt: r.received_at,
  status: r.status,
  reason: r.reason,
  runId: r.run_id,
  repliedAt: r.replied_at,
});

const DURABLE = { durable: true } as const;

/**
 * The inbound journal of platform messages and the `getUpdates` offset (schema version 7).
 * `queue` writes the updates and the new offset in one durable transaction: the offset the
 * platform is asked with next (which confirms every update before it) is on disk only together
 * with the updates it confirms, so a crash neither loses an update nor queues one twice (the
 * key is platform id + update id).
 */
export class PlatformInbound {
  readonly #s: {
    offset: Statement<[string], { next_offset: number }>;
    putOffset: Statement<[string, number]>;
    insert: Statement<InboundRow>;
    get: Statement<[string, number], InboundRow>;
    setStatus: Statement<{
      platform_id: string;
      update_id: number;
      status: InboundStatus;
      reason: string | null;
      run_id: string | null;
      replied_at: number | null;
    }>;
    replied: Statement<[number, string, number]>;
    open: Statement<[string], InboundRow>;
  } | null;

  constructor(private readonly ctx: StoreContext) {
    const db = ctx.db;
    const present =
      (db
        .prepare("SELECT count(*) FROM sqlite_master WHERE name = 'platform_inbound'")
        .pluck()
        .get() as number) > 0;
    this.#s = !present
      ? null
      : {
          offset: db.prepare('SELECT next_offset FROM platform_offsets WHERE platform_id = ?'),
          putOffset: db.prepare(
            `INSERT INTO platform_offsets (platform_id, next_offset) VALUES (?, ?)
             ON CONFLICT (platform_id) DO UPDATE SET next_offset = max(next_offset, excluded.next_offset)`,
          ),
          insert: db.prepare(
            `INSERT INTO platform_inbound (platform_id, update_id, chat_id, chat_type, message_id, sender, text,
               sent_at, received_at, status, reason, run_id, replied_at)
             VALUES (@platform_id, @update_id, @chat_id, @chat_type, @message_id, @sender, @text,
               @sent_at, @received_at, @status, @reason, @run_id, @replied_at) ON CONFLICT DO NOTHING`,
          ),
          get: db.prepare('SELECT * FROM platform_inbound WHERE platform_id = ? AND update_id = ?'),
          setStatus: db.prepare(
            `UPDATE platform_inbound SET status = @status, reason = @reason, run_id = @run_id,
               replied_at = @replied_at WHERE platform_id = @platform_id AND update_id = @update_id`,
          ),
          replied: db.prepare(
            'UPDATE platform_inbound SET replied_at = ? WHERE platform_id = ? AND update_id = ? AND replied_at IS NULL',
          ),
          open: db.prepare(
            `SELECT * FROM platform_inbound WHERE platform_id = ? AND replied_at IS NULL
             ORDER BY update_id`,
          ),
        };
  }

  /** The offset to ask the platform with (0 before the first update). */
  offset(platformId: string): number {
    return this.#s?.offset.get(platformId)?.next_offset ?? 0;
  }

  /**
   * Queues updates and moves the offset past them, in one durable transaction. Returns the
   * records this call queued (an update already in the journal is not queued again). An update
   * without a text message only moves the offset.
   */
  queue(platformId: string, updates: readonly InboundUpdate[]): InboundRecord[] {
    const s = this.#writable('queue');
    if (updates.length === 0) return [];
    const now = this.ctx.clock();
    return this.ctx.tx.run(() => {
      const queued: InboundRecord[] = [];
      let next = 0;
      for (const u of updates) {
        next = Math.max(next, u.updateId + 1);
        if (u.message === null) continue;
        const row: InboundRow = {
          platform_id: platformId,
          update_id: u.updateId,
          chat_id: u.message.chatId,
          chat_type: u.message.chatType,
          message_id: u.message.messageId,
          sender: toStoredText(this.ctx, u.message.sender),
          text: toStoredText(this.ctx, u.message.text) ?? '',
          sent_at: u.message.sentAt,
          received_at: now,
          status: 'queued',
          reason: null,
          run_id: null,
          replied_at: null,
        };
        if (s.insert.run(row).changes === 1) queued.push(toRecord(row));
      }
      s.putOffset.run(platformId, next);
      return queued;
    }, DURABLE);
  }

  /** One inbound record, or null. */
  get(platformId: string, updateId: number): InboundRecord | null {
    const row = this.#s?.get.get(platformId, updateId);
    return row === undefined ? null : toRecord(row);
  }

  /**
   * Records what became of a queued message (durably, before the run is started or the reply
   * sent). `done`: nothing more will be sent for it (ignored).
   */
  route(
    platformId: string,
    updateId: number,
    to: { status: InboundStatus; reason?: string | null; runId?: string | null; done?: boolean },
  ): void {
    const s = this.#writable('route');
    this.ctx.tx.run(
      () =>
        s.setStatus.run({
          platform_id: platformId,
          update_id: updateId,
          status: to.status,
          reason: to.reason ?? null,
          run_id: to.runId ?? null,
          replied_at: to.done === true ? this.ctx.clock() : null,
        }),
      DURABLE,
    );
  }

  /** Marks a message's reply finished (every part sent, failed or unknown). */
  replied(platformId: string, updateId: number): void {
    const s = this.#writable('replied');
    s.replied.run(this.ctx.clock(), platformId, updateId);
  }

  /** Messages of a connection whose reply is not finished, oldest first (the work a restart resumes). */
  open(platformId: string): InboundRecord[] {
    return (this.#s?.open.all(platformId) ?? []).map(toRecord);
  }

  #writable(operation: string) {
    assertWritable(this.ctx, `platform inbound ${operation}`);
    if (this.#s === null) throw new Error(`${this.ctx.file}: platform journal missing (schema older than 7)`);
    return this.#s;
  }
}
