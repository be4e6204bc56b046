import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One message the fake bot sent (what a chat would see). */
export interface SentMessage {
  readonly chatId: number;
  readonly text: string;
  readonly messageId: number;
  /** When the fake took it (ms since the epoch). */
  readonly at: number;
}

interface Update {
  update_id: number;
  message: {
    message_id: number;
    date: number;
    chat: { id: number; type: string; first_name?: string };
    from: { id: number; is_bot: false; first_name: string; username?: string };
    text: string;
  };
}

/** Telegram's limit on a message text. */
export const TELEGRAM_LIMIT = 4096;

/**
 * A fake Telegram Bot API server on 127.0.0.1 speaking the real protocol: `/bot<token>/<method>`,
 * parameters as JSON body or query string, `{ok, result}` envelopes and the API's error shape
 * (`{ok:false, error_code, description}`); `getUpdates` with `offset` (confirms every update
 * before it: they are forgotten), `timeout` (long poll, seconds), `limit`, and a 409 to the
 * older of two concurrent polls; `sendMessage` refusing an empty text or one over 4096
 * characters as Telegram does.
 */
export class FakeTelegram {
  readonly sent: SentMessage[] = [];
  /** Offsets `getUpdates` was called with, in order. */
  readonly offsets: number[] = [];
  /** Every `sendMessage` request that arrived (also refused and held ones). */
  sendRequests = 0;
  /** Requests with a wrong token. */
  unauthorized = 0;
  /** When true, the next `sendMessage` is counted and never answered (a reply cut mid-send). */
  holdNextSend = false;
  held: { chatId: number; text: string } | null = null;
  /** How many of the next `sendMessage` requests get 429 Too Many Requests (retry after 1 s). */
  rateLimitNext = 0;
  /**
   * Telegram's documented limit for a bot, when set: a `sendMessage` beyond this many accepted
   * in the last second gets 429 with `retry_after: 1`.
   */
  sendsPerSecond: number | null = null;
  /** `sendMessage` requests refused with 429 (either way). */
  rateLimited = 0;
  /** Chats that blocked the bot: `sendMessage` to them gets 403. */
  readonly blocked = new Set<number>();
  readonly #accepted: number[] = [];
  readonly #server: Server;
  #pending: Update[] = [];
  #nextUpdate = 700_000 + Math.floor(Math.random() * 1000);
  readonly #messageIds = new Map<number, number>();
  #nextSent = 1;
  #waiter: { res: ServerResponse; timer: NodeJS.Timeout; offset: number; limit: number } | null = null;
  readonly #open = new Set<ServerResponse>();

  private constructor(readonly token: string) {
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  static async start(token: string): Promise<FakeTelegram> {
    const fake = new FakeTelegram(token);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The `apiBase` to configure. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** A user writes to the bot; returns the update id and the message id. */
  push(
    chatId: number,
    text: string,
    opts: { type?: string; name?: string } = {},
  ): { updateId: number; messageId: number } {
    const messageId = (this.#messageIds.get(chatId) ?? 0) + 1;
    this.#messageIds.set(chatId, messageId);
    const update: Update = {
      update_id: this.#nextUpdate++,
      message: {
        message_id: messageId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chatId, type: opts.type ?? 'private', first_name: opts.name ?? 'Ada' },
        from: { id: Math.abs(chatId), is_bot: false, first_name: opts.name ?? 'Ada', username: 'ada' },
        text,
      },
    };
    this.#pending.push(update);
    this.#wake();
    return { updateId: update.update_id, messageId };
  }

  /** Messages the bot sent to one chat. */
  to(chatId: number): SentMessage[] {
    return this.sent.filter((m) => m.chatId === chatId);
  }

  /** Updates not yet confirmed by an offset. */
  get unconfirmed(): number {
    return this.#pending.length;
  }

  async close(): Promise<void> {
    for (const res of this.#open) res.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  #error(res: ServerResponse, code: number, description: string): void {
    this.#reply(res, code, { ok: false, error_code: code, description });
  }

  async #params(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    let body = '';
    for await (const chunk of req) body += String(chunk);
    if (body !== '' && (req.headers['content-type'] ?? '').startsWith('application/json'))
      Object.assign(params, JSON.parse(body) as Record<string, unknown>);
    return params;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.#open.add(res);
    res.on('close', () => this.#open.delete(res));
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (m === null) return this.#error(res, 404, 'Not Found');
    if (m[1] !== this.token) {
      this.unauthorized++;
      return this.#error(res, 401, 'Unauthorized');
    }
    let params: Record<string, unknown>;
    try {
      params = await this.#params(req, url);
    } catch {
      return this.#error(res, 400, "Bad Request: can't parse JSON object");
    }
    switch (m[2]) {
      case 'getUpdates':
        return this.#getUpdates(res, params);
      case 'sendMessage':
        return this.#sendMessage(res, params);
      default:
        return this.#error(res, 404, 'Not Found');
    }
  }

  #getUpdates(res: ServerResponse, params: Record<string, unknown>): void {
    const offset = Number(params.offset ?? 0);
    const timeout = Math.min(50, Math.max(0, Number(params.timeout ?? 0)));
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    this.offsets.push(offset);
    // An offset confirms every update before it: they are gone for good.
    if (offset > 0) this.#pending = this.#pending.filter((u) => u.update_id >= offset);
    if (this.#waiter !== null) {
      clearTimeout(this.#waiter.timer);
      this.#error(
        this.#waiter.res,
        409,
        'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      );
      this.#waiter = null;
    }
    const ready = this.#pending.filter((u) => u.update_id >= offset).slice(0, limit);
    if (ready.length > 0 || timeout === 0) return this.#reply(res, 200, { ok: true, result: ready });
    const timer = setTimeout(() => {
      this.#waiter = null;
      this.#reply(res, 200, { ok: true, result: [] });
    }, timeout * 1000);
    this.#waiter = { res, timer, offset, limit };
    res.on('close', () => {
      if (this.#waiter?.res === res) {
        clearTimeout(timer);
        this.#waiter = null;
      }
    });
  }

  #wake(): void {
    const w = this.#waiter;
    if (w === null) return;
    const ready = this.#pending.filter((u) => u.update_id >= w.offset).slice(0, w.limit);
    if (ready.length === 0) return;
    clearTimeout(w.timer);
    this.#waiter = null;
    this.#reply(w.res, 200, { ok: true, result: ready });
  }

  #sendMessage(res: ServerResponse, params: Record<string, unknown>): void {
    this.sendRequests++;
    const chatId = Number(params.chat_id);
    if (params.chat_id === undefined || !Number.isSafeInteger(chatId))
      return this.#error(res, 400, 'Bad Request: chat_id is empty');
    const text = typeof params.text === 'string' ? params.text : '';
    if (text.trim() === '') return this.#error(res, 400, 'Bad Request: message text is empty');
    if (text.length > TELEGRAM_LIMIT) return this.#error(res, 400, 'Bad Request: message is too long');
    if (this.blocked.has(chatId)) return this.#error(res, 403, 'Forbidden: bot was blocked by the user');
    const now = Date.now();
    while (this.#accepted.length > 0 && (this.#accepted[0] as number) <= now - 1000) this.#accepted.shift();
    const overLimit = this.sendsPerSecond !== null && this.#accepted.length >= this.sendsPerSecond;
    if (this.rateLimitNext > 0 || overLimit) {
      if (!overLimit) this.rateLimitNext--;
      this.rateLimited++;
      return this.#reply(res, 429, {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 1',
        parameters: { retry_after: 1 },
      });
    }
    if (this.holdNextSend) {
      this.holdNextSend = false;
      this.held = { chatId, text };
      return; // Never answered: the sender cannot know whether it arrived.
    }
    const messageId = this.#nextSent++;
    this.#accepted.push(now);
    this.sent.push({ chatId, text, messageId, at: now });
    this.#reply(res, 200, {
      ok: true,
      result: {
        message_id: messageId,
        from: { id: 1, is_bot: true, first_name: 'SnotraBot', username: 'snotra_bot' },
        chat: { id: chatId, type: 'private' },
        date: Math.floor(Date.now() / 1000),
        text,
      },
    });
  }
}
